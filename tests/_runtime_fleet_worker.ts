// One runtime of a fleet, as its own OS process, used the way a user would: a
// `Runtime` with a `redisCapacity` on a shared key, whose app keeps `lanes`
// forks going (fork, await, fork again) until told to stop, each process
// holding for a few ms. Unlike _fleet_worker.ts (a bare lease manager), this
// goes through the public API only.
//
// Protocol, one line each way: it prints "ready" once its client is
// connected, waits for "go <endAtMs>" on stdin (wall-clock ms, comparable
// across processes on one host), and at the end prints one JSON line
// `{"report": RuntimeWorkerReport}`. With `stream`, it also prints
// `{"start": µs, "fence": n}` the moment each process starts and
// `{"end": µs, "lost": boolean}` as it ends (so a parent that kills or cuts it
// off knows what it was running).
//
//   deno run --allow-net=127.0.0.1 --allow-env --allow-read _runtime_fleet_worker.ts '<json>'
import { Redis } from "ioredis";
import { LeaseLostError, Runtime } from "../mod.ts";
import { redisCapacity } from "../redis.ts";
import { readGo, wallMs } from "./_fleet_harness.ts";

export interface RuntimeWorkerOptions {
  port: number;
  key: string;
  limit: number;
  leaseMs: number;
  maxProcesses: number;
  /** Forks kept going at once (a demand of `lanes` processes). */
  lanes: number;
  holdMinMs: number;
  holdMaxMs: number;
  stream?: boolean;
}

export interface RuntimeWorkerReport {
  /** [start, end] of each process, wall-clock µs, as seen inside the process. */
  intervals: [number, number][];
  /** `lang.fence` of each process, in the order of `intervals`. */
  fences: number[];
  /** Processes cancelled with LeaseLostError. */
  lost: number;
  /**
   * `stats()` snapshots, taken as each process started, that broke
   * `active <= shared.held <= maxProcesses` or named the wrong key or limit.
   */
  badStats: string[];
  /** The most leases `stats().shared.held` reported. */
  maxHeld: number;
}

async function main(): Promise<void> {
  const options: RuntimeWorkerOptions = JSON.parse(Deno.args[0]);
  const { key, limit, leaseMs, maxProcesses } = options;
  const redis = new Redis({ host: "127.0.0.1", port: options.port, lazyConnect: true });
  await redis.connect();
  const runtime = new Runtime({
    maxProcesses,
    shared: redisCapacity({ redis, key, limit, leaseMs }),
  });
  console.log("ready");
  const endAt = await readGo();
  const report: RuntimeWorkerReport = {
    intervals: [],
    fences: [],
    lost: 0,
    badStats: [],
    maxHeld: 0,
  };
  const checkStats = () => {
    const stats = runtime.stats();
    const shared = stats.shared;
    report.maxHeld = Math.max(report.maxHeld, shared?.held ?? 0);
    if (
      shared === undefined || shared.key !== key || shared.limit !== limit ||
      shared.held < stats.active || shared.held > maxProcesses
    ) {
      report.badStats.push(JSON.stringify(stats));
    }
  };
  await runtime.runApp(async (app) => {
    const lane = async () => {
      while (wallMs() < endAt) {
        const handle = await app.forkProcess(async (lang) => {
          const start = wallMs() * 1000;
          const fence = lang.fence as number;
          checkStats();
          if (options.stream) console.log(JSON.stringify({ start, fence }));
          try {
            await lang.delay(lang.getRandomInt(options.holdMinMs, options.holdMaxMs));
          } finally {
            const end = wallMs() * 1000;
            report.intervals.push([start, end]);
            report.fences.push(fence);
            if (options.stream) {
              console.log(
                JSON.stringify({ end, lost: lang.signal.reason instanceof LeaseLostError }),
              );
            }
          }
        });
        await app.awaitResult(handle).catch((error) => {
          if (!(error instanceof LeaseLostError)) throw error;
          report.lost++;
        });
      }
    };
    await Promise.all(Array.from({ length: options.lanes }, lane));
  });
  await runtime[Symbol.asyncDispose]();
  await redis.quit();
  console.log(JSON.stringify({ report }));
}

if (import.meta.main) await main();
