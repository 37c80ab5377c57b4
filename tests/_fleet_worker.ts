// One runtime of a fleet test, as its own OS process: a lease manager on a
// shared key that keeps `concurrency` jobs running until told to stop, each
// holding its lease for a few ms. It prints "ready" once connected, waits for
// "go <endAtMs>" on stdin (wall-clock ms, comparable across processes on one
// host), and prints one JSON line: the intervals it held, in wall-clock µs.
//
//   deno run --allow-net=127.0.0.1 --allow-env --allow-read _fleet_worker.ts '<json options>'
import { Redis } from "ioredis";
import { LeaseManager } from "../src/runtime/shared/lease_manager.ts";
import { RedisLeaseStore } from "../src/runtime/shared/redis_store.ts";
import { readGo, wallMs } from "./_fleet_harness.ts";
import { lease } from "./_lease_waiter.ts";

export interface WorkerOptions {
  port: number;
  key: string;
  limit: number;
  leaseMs: number;
  concurrency: number;
  holdMinMs: number;
  holdMaxMs: number;
}

export interface WorkerReport {
  /** [start, end] of each hold, wall-clock µs. */
  intervals: [number, number][];
  /** Holds whose lease was lost while held. */
  lost: number;
  fences: number[];
}

async function main(): Promise<void> {
  const options: WorkerOptions = JSON.parse(Deno.args[0]);
  const redis = new Redis({ host: "127.0.0.1", port: options.port, lazyConnect: true });
  await redis.connect();
  const store = new RedisLeaseStore(redis, options);
  const manager = new LeaseManager(store, { maxHeld: options.concurrency });
  console.log("ready");
  const endAt = await readGo();
  const report: WorkerReport = { intervals: [], lost: 0, fences: [] };
  const lane = async () => {
    while (wallMs() < endAt) {
      const held = await lease(manager);
      const start = wallMs() * 1000;
      const hold = options.holdMinMs + Math.random() * (options.holdMaxMs - options.holdMinMs);
      await new Promise((resolve) => setTimeout(resolve, hold));
      const end = wallMs() * 1000;
      if (held.signal.aborted) report.lost++;
      report.intervals.push([start, end]);
      report.fences.push(held.fence);
      manager.release(held);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  await manager.dispose();
  await redis.quit();
  console.log(JSON.stringify(report));
}

if (import.meta.main) await main();
