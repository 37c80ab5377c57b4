// The throughput workload, once per implementation: run `task(i)` for every
// item with at most `concurrency` tasks in flight and return the results in
// input order. Each function builds its own pool, so a run starts cold.
import { Effect } from "effect";
import { call, run, spawn, type Task } from "effection";
import pLimit from "p-limit";
import PQueue from "p-queue";
import { pooledMap } from "@std/async/pool";
import { backoff, Runtime } from "../mod.ts";
import { task } from "./_shared.ts";
import { GuardedForkPool, MinimalForkPool, MinimalLang, MinimalProcess } from "./_ref_pools.ts";
import { LaneBatch } from "./_lane_pool.ts";

export type Impl = (items: readonly number[], concurrency: number) => Promise<number[]>;

/** forkProcess + awaitResult, every fork started at once (the p-limit shape). */
async function procpoolForkAwait(items: readonly number[], runtime: Runtime): Promise<number[]> {
  await using pool = runtime;
  return await pool.runApp((app) =>
    Promise.all(items.map(async (i) => app.awaitResult(await app.forkProcess(() => task(i)))))
  );
}

export const impls: Record<string, Impl> = {
  "procpool fork+await (fifo)": (items, concurrency) =>
    procpoolForkAwait(items, new Runtime({ maxProcesses: concurrency })),

  "procpool forkAll": async (items, concurrency) => {
    await using runtime = new Runtime({ maxProcesses: concurrency });
    return await runtime.runApp((app) => app.forkAll(items, (i) => task(i)));
  },

  "procpool fork+await (backoff)": (items, concurrency) =>
    procpoolForkAwait(
      items,
      new Runtime({ maxProcesses: concurrency, wait: backoff(), seed: 1 }),
    ),

  "p-limit": (items, concurrency) => {
    const limit = pLimit(concurrency);
    return Promise.all(items.map((i) => limit(() => task(i))));
  },

  "p-queue": (items, concurrency) => {
    const queue = new PQueue({ concurrency });
    return Promise.all(items.map((i) => queue.add(() => task(i))));
  },

  "pooledMap (@std/async)": (items, concurrency) =>
    Array.fromAsync(pooledMap(concurrency, items, (i: number) => task(i))),

  "effect Effect.forEach": (items, concurrency) =>
    Effect.runPromise(
      Effect.forEach(items, (i) => Effect.promise(() => task(i)), { concurrency }),
    ),

  "effection spawn workers": (items, concurrency) =>
    run(function* () {
      const results: number[] = new Array(items.length);
      let next = 0;
      const workers: Task<void>[] = [];
      for (let w = 0; w < concurrency; w++) {
        workers.push(
          yield* spawn(function* () {
            while (next < items.length) {
              const i = next++;
              results[i] = yield* call(() => task(items[i]));
            }
          }),
        );
      }
      for (const worker of workers) yield* worker;
      return results;
    }),

  "ref: worker loop": async (items, concurrency) => {
    const results: number[] = new Array(items.length);
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await task(items[i]);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return results;
  },

  "ref: minimal fork+await": async (items, concurrency) => {
    const pool = new MinimalForkPool(concurrency);
    return await Promise.all(
      items.map(async (i) => pool.awaitResult(await pool.fork(() => task(i)))),
    );
  },

  "ref: fork+await with guard and context": async (items, concurrency) => {
    const pool = new GuardedForkPool(concurrency);
    return await Promise.all(
      items.map(async (i) => pool.awaitResult(await pool.fork(() => task(i)))),
    );
  },

  "ref: worker loop + process objects": async (items, concurrency) => {
    const results: number[] = new Array(items.length);
    const stats = { started: 0, succeeded: 0, active: 0 };
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const i = next++;
        stats.started++;
        stats.active++;
        const process = new MinimalProcess(stats.started, undefined);
        const lang = new MinimalLang(process.id, process);
        const value = await task(items[i]);
        // Reads the LangL stand-in, so the JIT cannot drop its allocation.
        process.status = lang.processId > 0 ? 1 : 2;
        process.value = value;
        stats.succeeded++;
        stats.active--;
        results[i] = value;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return results;
  },

  // The forkAll floor with the nested-fork guard (LANE_FLOOR in _sections.ts).
  "ref: worker loop + process objects + lane guard": (items, concurrency) =>
    new LaneBatch(items, concurrency, (i) => task(i)).promise,

  "ref: unbounded Promise.all": (items) => Promise.all(items.map((i) => task(i))),
};
