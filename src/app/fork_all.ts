// forkAll: one feeder pulls items and forks each through the pool, so at most
// `maxProcesses` items are in flight and only one fork waits for a slot at a
// time, however many items there are. Like Promise.all, the first failure
// cancels the rest; unlike it, forkAll settles only once its cancelled
// processes have stopped.
import { ProcessCancelledError } from "../errors.ts";
import type { LangL } from "../lang/lang.ts";
import type { RuntimeCore } from "../runtime/core.ts";
import { SlotWaiter } from "../runtime/slot_pool.ts";
import type { CheckedForkOptions } from "./_options.ts";
import type { ProcessRecord, StopWaiter } from "./process.ts";
import { promiseFor, type Settler } from "../_settler.ts";
import { ScriptLane } from "./_guard.ts";
import { show } from "../_validate.ts";

/** What forkAll needs from its scope. */
export interface ForkHost {
  readonly core: RuntimeCore;
  admitProcess(options: CheckedForkOptions, name: string | undefined): ProcessRecord;
  addDependent(dependent: { scopeCancelled(reason: unknown): void }): void;
  removeDependent(dependent: { scopeCancelled(reason: unknown): void }): void;
  workStarted(): void;
  workEnded(): void;
  closedError(): Error;
  /** The scope's running processes (forkAll finds its own by their batch). */
  runningProcesses(): Iterable<ProcessRecord>;
}

const noop = () => {};

/** Checks what an iterator gave as `for...of` does: a non-object is a TypeError. */
function requireObjectFrom<T>(what: string, value: T): T {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) {
    throw new TypeError(`forkAll items: ${what} must return an object, got ${show(value)}`);
  }
  return value;
}
const arrayValues = Array.prototype[Symbol.iterator];

function resume<I, T>(run: ForkAllRun<I, T>): void {
  run.resume();
}

function resumeAfterGrant<I, T>(run: ForkAllRun<I, T>): void {
  const lane = run.lane;
  if (lane === undefined) run.resume();
  else lane.internal(resume, run);
}

export class ForkAllRun<I, T> extends SlotWaiter implements StopWaiter {
  readonly promise: Promise<T[]>;
  #resolve!: (results: T[]) => void;
  #reject!: (reason: unknown) => void;
  readonly #results: T[] = [];
  /** Items admitted and not yet stopped: a count, as a Set's upkeep was a sixth of a run. */
  #live = 0;
  readonly #syncItems: Iterator<I> | undefined;
  readonly #asyncItems: AsyncIterator<I> | undefined;
  /**
   * Items of a plain array are read by index, inside one lane: every item
   * runs in the context forkAll was called in, without a context switch
   * per item. (An array's own iterator reads it the same way; other sources
   * run user code on every step, which must not run inside the lane.)
   */
  readonly #arrayItems: readonly I[] | undefined;
  lane: ScriptLane | undefined = undefined;
  #nextIndex = 0;
  #exhausted = false;
  /** Whether this run sits in the pool's wait (at most once at a time). */
  #waiting = false;
  #waitingItem: I | undefined = undefined;
  #waitingIndex = 0;
  #granted: ProcessRecord | undefined = undefined;
  readonly #grant: Settler<ForkAllRun<I, T>> = { resolve: noop, reject: noop };
  #failure: { error: unknown } | undefined = undefined;
  #settled = false;
  readonly #onAbort: (() => void) | undefined;

  constructor(
    readonly host: ForkHost,
    items: Iterable<I> | AsyncIterable<I>,
    readonly process: (item: I, lang: LangL) => Promise<T> | T,
    readonly options: CheckedForkOptions,
  ) {
    // Its own owner: the scope's mass withdrawal leaves it alone; it withdraws
    // itself when told the scope was cancelled.
    super(undefined);
    this.promise = new Promise<T[]>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    host.workStarted();
    host.addDependent(this);
    const signal = options.signal;
    if (signal !== undefined) {
      this.#onAbort = () => this.#fail(signal.reason);
      signal.addEventListener("abort", this.#onAbort, { once: true });
    }
    if (Array.isArray(items) && items[Symbol.iterator] === arrayValues) {
      this.#arrayItems = items;
      ScriptLane.open((lane) => {
        this.lane = lane;
        this.#pumpSync();
      });
      return;
    }
    try {
      if (typeof (items as Iterable<I>)[Symbol.iterator] === "function") {
        this.#syncItems = requireObjectFrom(
          "[Symbol.iterator]()",
          (items as Iterable<I>)[Symbol.iterator](),
        );
      } else {
        this.#asyncItems = requireObjectFrom(
          "[Symbol.asyncIterator]()",
          (items as AsyncIterable<I>)[Symbol.asyncIterator](),
        );
      }
    } catch (error) {
      this.#fail(error);
      return;
    }
    if (this.#syncItems !== undefined) this.#pumpSync();
    else void this.#pumpAsync();
  }

  override get priority(): number {
    return this.options.priority;
  }

  scopeCancelled(): void {
    this.#fail(this.host.closedError());
  }

  #pumpSync(): void {
    const array = this.#arrayItems;
    const items = this.#syncItems;
    const slots = this.host.core.slots;
    while (this.#failure === undefined) {
      let item: I;
      if (array !== undefined) {
        if (this.#nextIndex >= array.length) {
          this.#exhausted = true;
          this.#maybeSettle();
          return;
        }
        item = array[this.#nextIndex];
      } else {
        try {
          const step = requireObjectFrom("the iterator's next()", items!.next());
          if (step.done) {
            this.#exhausted = true;
            this.#maybeSettle();
            return;
          }
          item = step.value;
        } catch (error) {
          this.#fail(error);
          return;
        }
      }
      const index = this.#nextIndex++;
      if (!slots.tryAcquire()) {
        this.#wait(item, index);
        return;
      }
      this.#launch(item, index);
    }
  }

  async #pumpAsync(): Promise<void> {
    const items = this.#asyncItems!;
    const slots = this.host.core.slots;
    while (this.#failure === undefined) {
      let item: I;
      // The pending next() does not hold the run open: a failure, the
      // signal or the scope's cancellation settles it meanwhile, and
      // whatever next() brings afterwards is dropped.
      try {
        const step = requireObjectFrom("the async iterator's next()", await items.next());
        if (this.#failure !== undefined) break;
        if (step.done) {
          this.#exhausted = true;
          break;
        }
        item = step.value;
      } catch (error) {
        this.#fail(error);
        return;
      }
      const index = this.#nextIndex++;
      if (!slots.tryAcquire()) {
        this.#wait(item, index);
        return;
      }
      this.#launch(item, index);
    }
    this.#maybeSettle();
  }

  #wait(item: I, index: number): void {
    this.#waitingItem = item;
    this.#waitingIndex = index;
    this.#waiting = true;
    // Registered here, in forkAll's own async context (the pump runs only
    // where no script has run before it in the same job), so that the granted
    // item runs there too (see _queued_fork.ts), whoever releases the slot.
    promiseFor(this.#grant).then(resumeAfterGrant);
    this.host.core.slots.enqueue(this);
  }

  slotGranted(): void {
    // The slot is taken now; the item's script runs one reaction later.
    this.#waiting = false;
    this.#granted = this.#admit(this.#waitingIndex);
    this.#grant.resolve(this);
  }

  /** Runs the granted item, then goes on feeding. */
  resume(): void {
    const record = this.#granted!;
    const item = this.#waitingItem as I;
    this.#granted = this.#waitingItem = undefined;
    record.invoke(this.process as (...args: never[]) => unknown, item, true);
    if (this.#asyncItems === undefined) this.#pumpSync();
    else void this.#pumpAsync();
  }

  #launch(item: I, index: number): void {
    this.#admit(index).invoke(this.process as (...args: never[]) => unknown, item, true);
  }

  #admit(index: number): ProcessRecord {
    const name = this.options.name === undefined ? undefined : `${this.options.name}[${index}]`;
    const record = this.host.admitProcess(this.options, name);
    record.tag = index;
    record.batch = this;
    record.lane = this.lane;
    this.#live++;
    return record;
  }

  processStopped(record: ProcessRecord): void {
    this.#live--;
    if (record.status === "succeeded") {
      this.#results[record.tag] = record.value as T;
    } else if (this.#failure === undefined) {
      // forkAll delivers this failure, so the scope need not re-raise it.
      record.markObserved();
      this.#fail(record.error);
    }
    this.#maybeSettle();
  }

  #fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = { error };
    if (this.#waiting && this.host.core.slots.withdraw(this)) {
      this.#waiting = false;
      this.#waitingItem = undefined;
    }
    const reason = new ProcessCancelledError("a sibling in forkAll did not succeed", {
      cause: error,
    });
    for (const record of [...this.host.runningProcesses()]) {
      if (record.batch === this) record.cancel(reason);
    }
    // Close the source so a generator can run its cleanup.
    try {
      const closing = this.#syncItems?.return?.() ?? this.#asyncItems?.return?.();
      if (closing instanceof Promise) closing.catch(() => {});
    } catch {
      // A source that fails to close cannot change the outcome any more.
    }
    this.#maybeSettle();
  }

  #maybeSettle(): void {
    if (this.#settled || this.#live > 0 || this.#waiting) return;
    if (this.#failure === undefined && !this.#exhausted) return;
    this.#settled = true;
    if (this.#onAbort !== undefined) {
      this.options.signal!.removeEventListener("abort", this.#onAbort);
    }
    this.host.removeDependent(this);
    this.host.workEnded();
    if (this.#failure !== undefined) this.#reject(this.#failure.error);
    else this.#resolve(this.#results);
  }
}
