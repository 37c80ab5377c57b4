// The reference pools: the least a pool with procpool's shapes must do, the
// floors the throughput and hand-off rows are read against. Kept apart from
// the peers (bench/_impls.ts) so that a runner using only these does not load
// every peer library.
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
    return handle.result;
  }

  #start<T>(fn: (lang: MinimalLang) => Promise<T>): GuardedHandle<T> {
    const record = new MinimalProcess(++this.#nextId, undefined);
    const lang = new MinimalLang(record.id, record);
    const result = GuardedForkPool.#inScript.run(record, fn, lang);
    const release = () => this.#release();
    result.then(release, release);
    return new GuardedHandle(record, result);
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
  constructor(readonly record: MinimalProcess, readonly result: Promise<T>) {}
}

/**
 * What any pool that gives each task its own process must allocate per task,
 * and nothing else: a record with a process's status, outcome and
 * cancellation fields, a separate object handed to the task (LangL's place),
 * and the counters `stats()` reports. The worker loop plus these is the floor
 * for the forkAll row.
 */
export class MinimalProcess {
  status = 0;
  value: unknown = undefined;
  error: unknown = undefined;
  cancelReason: unknown = undefined;
  cancelHook: unknown = undefined;
  constructor(readonly id: number, readonly name: string | undefined) {}
}

export class MinimalLang {
  constructor(readonly processId: number, readonly process: MinimalProcess) {}
}

/**
 * One instance of each class above, kept for the module's life, as
 * procpool keeps an item record (src/app/_records.ts, MAP_KEEPER): without
 * one, a full GC between runs that finds no instance drops the class's
 * hidden class and every function optimised for it, and each run starts
 * from unoptimised code. A floor must not pay that when procpool does not.
 */
export const REF_MAP_KEEPERS: readonly object[] = (() => {
  const process = new MinimalProcess(0, undefined);
  return [
    new MinimalForkPool(1),
    new GuardedForkPool(1),
    process,
    new MinimalLang(0, process),
    new GuardedHandle(process, Promise.resolve()),
  ];
})();
