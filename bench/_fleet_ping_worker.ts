// One OS process of bench:fleet's pub/sub floor (_fleet_ping.ts): a ring of
// processes passes tokens by PUBLISH alone. It prints "ready" once
// subscribed, waits for "go <ms>", then on each token it receives while idle
// records the receipt's delay after the send (wall-clock ms, comparable across
// processes on one host), holds it 2–5 ms (setTimeout, as the hand-off row's
// jobs) and publishes it, stamped with the send time, to the next process.
// A token that arrives while it holds one waits (not recorded). On "stop" it
// prints the delays as one JSON line.
//
//   deno run --allow-net=127.0.0.1 --allow-env --allow-read bench/_fleet_ping_worker.ts '<json Ring>'
import { Redis } from "ioredis";
import { readGo, wallMs } from "../tests/_fleet_harness.ts";

export interface Ring {
  port: number;
  /** Channel prefix; process i listens on `${prefix}${i}`. */
  prefix: string;
  index: number;
  size: number;
}

export const STOP = "stop";

async function main(): Promise<void> {
  const ring: Ring = JSON.parse(Deno.args[0]);
  const redis = new Redis({ host: "127.0.0.1", port: ring.port, lazyConnect: true });
  await redis.connect();
  const subscriber = redis.duplicate();
  const next = `${ring.prefix}${(ring.index + 1) % ring.size}`;
  const delays: number[] = [];
  const queued: number[] = [];
  let holding = false, stopped = false;
  const { promise: stop, resolve } = Promise.withResolvers<void>();
  const hold = () => {
    holding = true;
    setTimeout(() => {
      holding = false;
      if (stopped) return;
      void redis.publish(next, String(wallMs())).catch(() => {});
      if (queued.length > 0) {
        queued.shift();
        hold();
      }
    }, 2 + Math.random() * 3);
  };
  subscriber.on("message", (_channel: string, message: string) => {
    if (message === STOP) {
      stopped = true;
      return resolve();
    }
    if (holding) return void queued.push(Number(message));
    delays.push(wallMs() - Number(message));
    hold();
  });
  await subscriber.subscribe(`${ring.prefix}${ring.index}`);
  console.log("ready");
  await readGo();
  await stop;
  console.log(JSON.stringify(delays));
  subscriber.disconnect();
  redis.disconnect();
  Deno.exit(0);
}

if (import.meta.main) await main();
