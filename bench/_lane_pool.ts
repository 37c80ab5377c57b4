// The forkAll floor with procpool's nested-fork guard: the least a batch must
// do per item when its scripts share one marked async context (a lane, see
// src/app/_guard.ts) and must still not leak what one script does to that
// context (`enterWith`) into the next. Read the forkAll row against it.
import { AsyncLocalStorage } from "node:async_hooks";
import { MinimalLang, type MinimalProcess, REF_MAP_KEEPERS } from "./_ref_pools.ts";

type Script<T> = (item: number, lang: MinimalLang) => Promise<T>;

const inScript = new AsyncLocalStorage<{ internal: boolean }>();

/** MinimalProcess's fields, plus the item's batch and index (procpool's ItemRecord has both). */
class LaneRecord {
  status = 0;
  value: unknown = undefined;
  error: unknown = undefined;
  cancelReason: unknown = undefined;
  cancelHook: unknown = undefined;
  constructor(
    readonly id: number,
    readonly name: string | undefined,
    // deno-lint-ignore no-explicit-any
    readonly batch: LaneBatch<any>,
    readonly index: number,
  ) {}
}

/**
 * The worker loop plus, per item, what procpool's lane design makes it pay
 * and nothing else: a record and a LangL stand-in (as in "worker loop +
 * process objects"); a promise job of its own for the script, registered in
 * the lane's clean context (what a script enters ends with its job); the
 * outcome heard through `.then` with two bound handlers (a failure must be
 * told from a value); a feeder that runs only in the lane's clean context, so
 * a freed slot wakes it through a promise registered there (once per wave,
 * not per item), and the item that wakes it runs last in that wake's job.
 * One `AsyncLocalStorage.run` per batch. No scope, cancellation, FIFO line
 * or timeline.
 */
export class LaneBatch<T> {
  readonly #mark = { internal: true };
  readonly #results: T[];
  #next = 0;
  #active = 0;
  #nextId = 0;
  /** With #nextId (started) and #active, the counters `stats()` reports. */
  #succeeded = 0;
  #failed = 0;
  /** record, item, record, item, …: the items whose start jobs are queued. */
  readonly #starts: unknown[] = [];
  #head = 0;
  #tail = 0;
  readonly #self: Promise<LaneBatch<T>> = Promise.resolve(this);
  #wake: ((batch: LaneBatch<T>) => void) | undefined = undefined;
  #failure: { error: unknown } | undefined = undefined;
  #settle!: (results: T[]) => void;
  #fail!: (error: unknown) => void;
  readonly promise: Promise<T[]>;

  constructor(
    readonly items: readonly number[],
    readonly max: number,
    readonly script: Script<T>,
  ) {
    this.#results = new Array(items.length);
    this.promise = new Promise<T[]>((resolve, reject) => {
      this.#settle = resolve;
      this.#fail = reject;
    });
    try {
      inScript.run(this.#mark, feedFirst, this);
    } finally {
      this.#mark.internal = false;
    }
  }

  /** Starts items while slots are free; the first one inline if `inline` (a wake's job). */
  feed(inline: boolean): void {
    const items = this.items;
    let first: LaneRecord | undefined;
    let firstItem = 0;
    while (this.#next < items.length && this.#active < this.max) {
      const index = this.#next++;
      this.#active++;
      const record = new LaneRecord(++this.#nextId, undefined, this, index);
      if (inline && first === undefined) {
        first = record;
        firstItem = items[index];
        continue;
      }
      const tail = this.#tail;
      this.#starts[tail] = record;
      this.#starts[tail + 1] = items[index];
      this.#tail = tail + 2;
      this.#self.then(startNext);
    }
    if (this.#next < items.length) {
      // Registered here, in the clean context, whoever frees the slot.
      new Promise<LaneBatch<T>>((resolve) => this.#wake = resolve).then(wakeUp);
    } else if (this.#active === 0) {
      this.#end();
    }
    if (first !== undefined) this.run(first, firstItem);
  }

  /** The wake's job: feeds as procpool's own code, the first item's script last. */
  wake(): void {
    const mark = this.#mark;
    mark.internal = true;
    try {
      this.feed(true);
    } finally {
      mark.internal = false;
    }
  }

  startNext(): void {
    const starts = this.#starts;
    const head = this.#head;
    const record = starts[head] as LaneRecord;
    const item = starts[head + 1] as number;
    starts[head] = starts[head + 1] = undefined;
    if (head + 2 === this.#tail) this.#head = this.#tail = 0;
    else this.#head = head + 2;
    this.run(record, item);
  }

  /** Runs the script under the lane's mark, last in its job. */
  run(record: LaneRecord, item: number): void {
    const mark = this.#mark;
    const before = mark.internal;
    let result: unknown;
    mark.internal = false;
    try {
      const lang = new MinimalLang(record.id, record);
      // Held by the record, as procpool's record holds its LangL object, so
      // that the JIT cannot drop the allocation when a script ignores it.
      record.cancelHook = lang;
      result = this.script(item, lang);
    } catch (error) {
      result = Promise.reject(error);
    } finally {
      mark.internal = before;
    }
    Promise.resolve(result).then(returned.bind(record), threw.bind(record));
  }

  stopped(record: LaneRecord, ok: boolean, outcome: unknown): void {
    const mark = this.#mark;
    mark.internal = true;
    record.status = ok ? 1 : 2;
    if (ok) this.#succeeded++;
    else this.#failed++;
    if (ok) this.#results[record.index] = record.value = outcome as T;
    else if (this.#failure === undefined) this.#failure = { error: record.error = outcome };
    this.#active--;
    const wake = this.#wake;
    if (wake !== undefined) {
      this.#wake = undefined;
      wake(this);
    } else if (this.#active === 0 && this.#next === this.items.length) {
      this.#end();
    }
    mark.internal = false;
  }

  #end(): void {
    if (this.#failure === undefined) this.#settle(this.#results);
    else this.#fail(this.#failure.error);
  }
}

function feedFirst<T>(batch: LaneBatch<T>): void {
  batch.feed(false);
}

function wakeUp<T>(batch: LaneBatch<T>): void {
  batch.wake();
}

function startNext<T>(batch: LaneBatch<T>): void {
  batch.startNext();
}

function returned(this: LaneRecord, value: unknown): void {
  this.batch.stopped(this, true, value);
}

function threw(this: LaneRecord, error: unknown): void {
  this.batch.stopped(this, false, error);
}

/** A batch, a record and a LangL stand-in kept for the module's life (see REF_MAP_KEEPERS). */
export const LANE_MAP_KEEPERS: readonly object[] = (() => {
  const batch = new LaneBatch<number>([], 1, (item) => Promise.resolve(item));
  const record = new LaneRecord(0, undefined, batch, 0);
  return [batch, record, new MinimalLang(0, record as unknown as MinimalProcess), REF_MAP_KEEPERS];
})();
