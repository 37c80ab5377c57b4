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
import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The least a pool with procpool's fork-then-await shape can do: a FIFO
 * semaphore whose fork resolves to a handle holding the task's promise. No
 * scopes, statuses, cancellation, guard or stats. It is the floor for the
 * fork+await row: the caller's three awaits per task are the same.
 */
export class MinimalForkPool {
  #active = 0;
  readonly #queue: ((() => void) | undefined)[] = [];
  #head = 0;

  constructor(readonly max: number) {}

  fork<T>(fn: () => Promise<T>): Promise<{ result: Promise<T> }> {
    if (this.#active < this.max) {
      this.#active++;
      return Promise.resolve({ result: this.#start(fn) });
    }
    return new Promise((resolve) => this.#queue.push(() => resolve({ result: this.#start(fn) })));
  }

  awaitResult<T>(handle: { result: Promise<T> }): Promise<T> {
    return handle.result;
  }

  #start<T>(fn: () => Promise<T>): Promise<T> {
    const result = fn();
    const release = () => this.#release();
    result.then(release, release);
    return result;
  }

  #release(): void {
    if (this.#head === this.#queue.length) {
      this.#active--;
      return;
    }
    const next = this.#queue[this.#head]!;
    this.#queue[this.#head++] = undefined;
    next();
  }
}

/**
 * The minimal pool plus what API.md and the mission make every procpool
 * fork pay, and nothing else: a process record, a LangL object and a handle
 * per fork; the script marked as LangL code by an `AsyncLocalStorage.run`
 * (the nested-fork guard: a script's continuations must be recognisable);
 * and a queued fork's grant delivered through a reaction registered when it
 * was queued, so that the script runs in its forker's async context. The
 * floor for the fork+await row with the guard on.
 */
export class GuardedForkPool {
  static readonly #inScript = new AsyncLocalStorage<MinimalProcess>();
  #active = 0;
  #nextId = 0;
  readonly #queue: ((() => void) | undefined)[] = [];
  #head = 0;

  constructor(readonly max: number) {}

  fork<T>(fn: (lang: MinimalLang) => Promise<T>): Promise<GuardedHandle<T>> {
    if (GuardedForkPool.#inScript.getStore() !== undefined) throw new Error("nested fork");
    if (this.#active < this.max) {
      this.#active++;
      return Promise.resolve(this.#start(fn));
    }
    return new Promise<void>((resolve) => this.#queue.push(resolve)).then(() => this.#start(fn));
  }

  awaitResult<T>(handle: GuardedHandle<T>): Promise<T> {
    if (GuardedForkPool.#inScript.getStore() !== undefined) throw new Error("nested await");
    return handle.record.result as Promise<T>;
  }

  #start<T>(fn: (lang: MinimalLang) => Promise<T>): GuardedHandle<T> {
    const record = new MinimalProcess(++this.#nextId, undefined);
    const lang = new MinimalLang(record.id, record);
    const result = GuardedForkPool.#inScript.run(record, fn, lang);
    record.result = result;
    const release = () => this.#release();
    result.then(release, release);
    return new GuardedHandle<T>(record);
  }

  #release(): void {
    if (this.#head === this.#queue.length) {
      this.#active--;
      return;
    }
    const next = this.#queue[this.#head]!;
    this.#queue[this.#head++] = undefined;
    next();
  }
}

class GuardedHandle<T> {
  constructor(readonly record: MinimalProcess) {}
  declare readonly _result: T;
}

/**
 * What any pool that gives each task its own process must allocate per task,
 * and nothing else: a record with a process's status, outcome and
 * cancellation fields, a separate object handed to the task (LangL's place),
 * and the counters `stats()` reports. The worker loop plus these is the floor
 * for the forkAll row.
 */
class MinimalProcess {
  status = 0;
  value: unknown = undefined;
  error: unknown = undefined;
  cancelReason: unknown = undefined;
  cancelHook: unknown = undefined;
  result: Promise<unknown> | undefined = undefined;
  constructor(readonly id: number, readonly name: string | undefined) {}
}

class MinimalLang {
  constructor(readonly processId: number, readonly process: MinimalProcess) {}
}

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

  "ref: unbounded Promise.all": (items) => Promise.all(items.map((i) => task(i))),
};
