// bench:fleet's floor for the hand-off row: the same pattern (4 processes, 2
// slots passing between them, holds of 2–5 ms) with nothing but PUBLISH
// between them: no script, no acquire, no lease (_fleet_ping_worker.ts). Its
// delays are what Redis's pub/sub and the waiting process's wake-up cost on
// this machine, in the same run: no limiter that hands over by pub/sub can
// beat them.
import type { Redis } from "ioredis";
import { FleetChild, wallMs } from "../tests/_fleet_harness.ts";
import { percentile } from "./_shared.ts";
import { type Ring, STOP } from "./_fleet_ping_worker.ts";

const WORKER = new URL("./_fleet_ping_worker.ts", import.meta.url).pathname;
/** The first delays are left out: processes and connections warming up. */
const WARM_UP = 50;

export interface PingFloor {
  p50: number;
  p99: number;
  count: number;
}

/** Passes `tokens` tokens around `size` processes for `ms`; delays in ms. */
export async function pingFloor(
  redis: Redis,
  port: number,
  { size, tokens, ms }: { size: number; tokens: number; ms: number },
): Promise<PingFloor> {
  const prefix = `fleet:ping:${crypto.randomUUID()}:`;
  const workers = Array.from(
    { length: size },
    (_, index) => new FleetChild(WORKER, { port, prefix, index, size } satisfies Ring),
  );
  try {
    await Promise.all(workers.map(async (worker) => {
      const line = await worker.line("ready");
      if (line !== "ready") throw new Error(`expected "ready", got ${JSON.stringify(line)}`);
    }));
    await Promise.all(workers.map((worker) => worker.send("go 0")));
    // Tokens start evenly spaced around the ring, as the hand-off row's slots spread.
    for (let token = 0; token < tokens; token++) {
      await redis.publish(`${prefix}${Math.floor(token * size / tokens)}`, String(wallMs()));
    }
    await new Promise((resolve) => setTimeout(resolve, ms));
    for (let index = 0; index < size; index++) await redis.publish(`${prefix}${index}`, STOP);
    const delays = (await Promise.all(
      workers.map(async (worker) => JSON.parse(await worker.line("its delays")) as number[]),
    )).flatMap((list) => list.slice(WARM_UP / size));
    return { p50: percentile(delays, 50), p99: percentile(delays, 99), count: delays.length };
  } finally {
    for (const worker of workers) worker.kill();
    await Promise.all(workers.map((worker) => worker.finish()));
  }
}
