// The item feeder shared by forkAll, forkAllSettled and forkStream: it pulls
// items one at a time and forks each through the pool, so at most one fork
// of the batch waits for a slot, however many items there are. What a batch
// does with each stopped item, and when it is done, is its subclass's.
import type { LangL } from "../lang/lang.ts";
import { SlotWaiter } from "../runtime/slot_pool.ts";
import type { CheckedForkOptions } from "./_options.ts";
import type { ForkHost } from "./_fork_host.ts";
import type { ProcessRecord, StopWaiter } from "./process.ts";
import { promiseFor, type Settler } from "../_settler.ts";
import { ScriptLane } from "./_guard.ts";
import { BatchSource, END } from "./_batch_source.ts";

const noop = () => {};

function pump<I>(batch: Batch<I>): void {
  batch.pump();
}

// Reactions registered by the feeder itself, so in the context the batch was
// called in (the lane's, for an array), whoever settles them.
function resumeAfterGrant<I>(batch: Batch<I>): void {
  const lane = batch.lane;
  if (lane === undefined) batch.resume();
  else lane.internal(resumeGranted, batch);
}

function resumeGranted<I>(batch: Batch<I>): void {
  batch.resume();
}

// A lane item's own promise job: the batch itself is the value it gets, so
// no closure is allocated per item; the starts are taken in the order queued.
function startNext<I>(batch: Batch<I>): void {
  batch.startQueued();
}

function wakeUp<I>(batch: Batch<I>): void {
  const lane = batch.lane;
  if (lane === undefined) batch.pump();
  else lane.internal(pump, batch);
}

export abstract class Batch<I> extends SlotWaiter implements StopWaiter {
  /** Items admitted and not yet stopped: a count, as a Set's upkeep was a sixth of a run. */
  live = 0;
  /** Items pulled from the source so far; the next item's index. */
  pulled = 0;
  #source: BatchSource<I> | undefined = undefined;
  /**
   * The items of a plain array run in one lane: in the context the batch
   * was called in, without a context switch per item. (Other sources run
   * user code on every step, which must not run inside the lane.)
   */
  lane: ScriptLane | undefined = undefined;
  #exhausted = false;
  #stopped = false;
  #pumping = false;
  /** Whether this batch sits in the pool's wait (at most once at a time). */
  #waiting = false;
  #waitingItem: I | undefined = undefined;
  #waitingIndex = 0;
  #granted: ProcessRecord | undefined = undefined;
  readonly #grant: Settler<Batch<I>> = { resolve: noop, reject: noop };
  /** Whether the feeder stopped because canPull() said so; `#wake` resumes it. */
  #paused = false;
  readonly #wake: Settler<Batch<I>> = { resolve: noop, reject: noop };
  #finished = false;
  #onAbort: (() => void) | undefined = undefined;
  /** A lane's items whose script waits for its own job: record, item, record, item… */
  readonly #starts: unknown[] = [];
  #startsHead = 0;
  #startsTail = 0;
  /** Resolved with the batch: each item's job is a reaction to it. */
  #self: Promise<this> | undefined = undefined;

  constructor(
    readonly host: ForkHost,
    readonly operation: string,
    readonly process: (item: I, lang: LangL) => unknown,
    readonly options: CheckedForkOptions,
  ) {
    // Its own owner: the scope's mass withdrawal leaves it alone; it withdraws
    // itself when told the scope was cancelled.
    super(undefined);
  }

  get priority(): number {
    return this.options.priority;
  }

  /** Starts feeding; the subclass calls it once its own fields are set. */
  protected begin(items: Iterable<I> | AsyncIterable<I>): void {
    this.host.workStarted();
    this.host.addDependent(this);
    const signal = this.options.signal;
    const source = this.#source = new BatchSource(this.operation, items);
    if (signal?.aborted) return this.aborted(signal.reason);
    if (signal !== undefined) {
      this.#onAbort = () => this.aborted(signal.reason);
      signal.addEventListener("abort", this.#onAbort, { once: true });
    }
    if (source.array !== undefined) {
      ScriptLane.open((lane) => {
        this.lane = lane;
        this.pump();
      });
      return;
    }
    try {
      source.open();
    } catch (error) {
      return this.sourceFailed(error);
    }
    this.pump();
  }

  // ---- what a subclass decides ------------------------------------------------

  /** Called when the scope is cancelled. */
  abstract scopeCancelled(reason: unknown): void;
  /** `options.signal` aborted. */
  protected abstract aborted(reason: unknown): void;
  /** The source threw, or broke the iterator protocol. */
  protected abstract sourceFailed(error: unknown): void;
  /** An item stopped (`live` already counts it out). */
  protected abstract itemStopped(record: ProcessRecord): void;
  /** Nothing is live or waiting any more, and feeding is over: called once. */
  protected abstract finished(): void;
  /** Whether the feeder may pull another item now (forkStream bounds it). */
  protected canPull(): boolean {
    return true;
  }

  // ---- what a subclass may call ---------------------------------------------

  /** The array being fed, if the source is one. */
  get arrayItems(): readonly I[] | undefined {
    return this.#source?.array;
  }

  get feedingStopped(): boolean {
    return this.#stopped;
  }

  get isFinished(): boolean {
    return this.#finished;
  }

  /**
   * Stops pulling: withdraws the item waiting for a slot (it never starts),
   * cancels the live items with `cancelReason`, and closes the source so a
   * generator can run its cleanup. Idempotent.
   */
  protected stopFeeding(cancelReason: unknown): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#waiting && this.host.core.slots.withdraw(this)) {
      this.#waiting = false;
      this.#waitingItem = undefined;
    }
    for (const record of [...this.host.runningProcesses()]) {
      if (record.batch === this) record.cancel(cancelReason);
    }
    // A pending next() is left behind: whatever it brings is dropped.
    this.#source?.close();
    this.checkFinished();
  }

  /** Resumes a feeder that canPull() paused; a no-op otherwise. */
  protected resumeFeeding(): void {
    if (!this.#paused || this.#stopped) return;
    this.#paused = false;
    this.#wake.resolve(this);
  }

  protected checkFinished(): void {
    if (this.#finished || this.live > 0 || this.#waiting) return;
    if (!this.#stopped && !this.#exhausted) return;
    this.#finished = true;
    if (this.#onAbort !== undefined) {
      this.options.signal!.removeEventListener("abort", this.#onAbort);
    }
    this.leaveScope();
    this.host.workEnded();
    this.finished();
  }

  /** Stops hearing from the scope (forkStream stays until it is read or closed). */
  protected leaveScope(): void {
    this.host.removeDependent(this);
  }

  // ---- the feeder -----------------------------------------------------------

  pump(): void {
    if (this.#source!.isAsync) void this.#pumpAsync();
    else this.#pumpSync();
  }

  #pumpSync(): void {
    const source = this.#source!;
    while (!this.#stopped) {
      if (!this.canPull()) return this.#pause();
      let item: I | typeof END;
      try {
        item = source.pull(this.pulled);
      } catch (error) {
        return this.sourceFailed(error);
      }
      if (item === END) return this.#exhaust();
      if (!this.#start(item)) return;
    }
  }

  async #pumpAsync(): Promise<void> {
    // One loop at a time: a wake-up while next() is pending finds it running.
    if (this.#pumping) return;
    this.#pumping = true;
    const source = this.#source!;
    try {
      while (!this.#stopped) {
        if (!this.canPull()) return this.#pause();
        let item: I | typeof END;
        // The pending next() does not hold the batch open: a failure, the
        // signal or the scope's cancellation settles it meanwhile, and
        // whatever next() brings afterwards is dropped.
        try {
          item = await source.pullAsync();
        } catch (error) {
          if (!this.#stopped) this.sourceFailed(error);
          return;
        }
        if (this.#stopped) return;
        if (item === END) return this.#exhaust();
        if (!this.#start(item)) return;
      }
    } finally {
      this.#pumping = false;
    }
  }

  /** Starts the item just pulled; false if it waits for a slot (the feeder stops then). */
  #start(item: I): boolean {
    const index = this.pulled++;
    if (!this.host.core.slots.tryAcquire()) {
      this.#wait(item, index);
      return false;
    }
    let record: ProcessRecord;
    try {
      record = this.#admit(index);
    } catch (error) {
      // Its setup threw (a user clock or logger): the slot goes back, the call fails.
      this.host.core.slots.release();
      this.sourceFailed(error);
      return false;
    }
    if (this.lane === undefined) record.invoke(this.process, item, true);
    else this.#queueStart(record, item);
    return true;
  }

  /**
   * A lane item's script runs in a promise job of its own, registered here
   * in the lane's clean context: whatever the script does to the async
   * context (`enterWith`) ends with that job.
   */
  #queueStart(record: ProcessRecord, item: I): void {
    const tail = this.#startsTail;
    this.#starts[tail] = record;
    this.#starts[tail + 1] = item;
    this.#startsTail = tail + 2;
    (this.#self ??= Promise.resolve(this)).then(startNext);
  }

  startQueued(): void {
    const starts = this.#starts;
    const head = this.#startsHead;
    const record = starts[head] as ProcessRecord;
    const item = starts[head + 1];
    starts[head] = starts[head + 1] = undefined;
    if (head + 2 === this.#startsTail) this.#startsHead = this.#startsTail = 0;
    else this.#startsHead = head + 2;
    record.invokeInLaneNow(this.process, item);
  }

  #exhaust(): void {
    this.#exhausted = true;
    this.checkFinished();
  }

  #pause(): void {
    this.#paused = true;
    // Registered here, where the feeder runs (the batch's own context), so
    // that items pulled after a consumer's read run there too.
    promiseFor(this.#wake).then(wakeUp);
  }

  #wait(item: I, index: number): void {
    this.#waitingItem = item;
    this.#waitingIndex = index;
    this.#waiting = true;
    // Registered here, in the batch's own async context (the feeder runs only
    // where no script has run before it in the same job), so that the granted
    // item runs there too (see _queued_fork.ts), whoever releases the slot.
    promiseFor(this.#grant).then(resumeAfterGrant);
    try {
      this.host.core.slots.enqueue(this);
    } catch (error) {
      // The pool could not queue it (a sleep on a broken clock).
      this.waitFailed(error);
    }
  }

  slotGranted(): void {
    // The slot is taken now; the item's script runs one reaction later.
    this.#waiting = false;
    try {
      this.#granted = this.#admit(this.#waitingIndex);
    } catch (error) {
      // Its setup threw (a user clock or logger): the slot goes back one
      // microtask later (a release here would recurse through the line).
      const slots = this.host.core.slots;
      queueMicrotask(() => slots.release());
      this.#waitingItem = undefined;
      this.sourceFailed(error);
      return;
    }
    this.#grant.resolve(this);
  }

  waitFailed(reason: unknown): void {
    this.#waiting = false;
    this.#waitingItem = undefined;
    this.sourceFailed(reason);
  }

  /** Runs the granted item, then goes on feeding. */
  resume(): void {
    const record = this.#granted!;
    const item = this.#waitingItem as I;
    this.#granted = this.#waitingItem = undefined;
    if (this.lane === undefined) {
      record.invoke(this.process, item, true);
      this.pump();
      return;
    }
    // In a lane this reaction, registered in the lane's clean context, is the
    // item's own job: feed first (the next wait is registered here, before any
    // script could change the context), then run the script, last in the job.
    this.pump();
    record.invokeInLaneNow(this.process, item);
  }

  #admit(index: number): ProcessRecord {
    const name = this.options.name === undefined ? undefined : `${this.options.name}[${index}]`;
    const record = this.host.admitProcess(this.options, name);
    record.tag = index;
    record.batch = this;
    record.lane = this.lane;
    this.live++;
    return record;
  }

  processStopped(record: ProcessRecord): void {
    this.live--;
    this.itemStopped(record);
    this.checkFinished();
  }
}
