// The item feeder shared by forkAll, forkAllSettled and forkStream: it pulls
// items one at a time and forks each through the pool, so at most one fork
// of the batch waits for a slot (_batch_wait.ts), however many items there
// are. What a batch does with each stopped item, and when it is done, is its
// subclass's.
import type { LangL } from "../lang/lang.ts";
import type { CheckedForkOptions } from "./_options.ts";
import type { ForkHost } from "./_fork_host.ts";
import type { ProcessRecord, StopWaiter } from "./process.ts";
import { admitItem, type ItemRecord } from "./_records.ts";
import { type Resolver, resolvingPromiseFor } from "../_settler.ts";
import { ScriptLane } from "./_guard.ts";
import { BatchSource, END } from "./_batch_source.ts";
import { BatchWait, type WaitingBatch } from "./_batch_wait.ts";
import { LaneStarts } from "./_lane_starts.ts";
import { invokeInLane } from "./_lane_script.ts";
import { LiveItems } from "./_live_items.ts";

const noop = () => {};

function pump<I>(batch: Batch<I>): void {
  batch.pump();
}

// Registered by the feeder itself, so in the context the batch was called in
// (the lane's, for an array), whoever settles it.
function wakeUp<I>(batch: Batch<I>): void {
  const lane = batch.lane;
  if (lane === undefined) batch.pump();
  else lane.internal(pump, batch);
}

export abstract class Batch<I> implements StopWaiter, WaitingBatch {
  /** Items admitted and not yet stopped. */
  live = 0;
  /** The same items, which the scope does not keep with its forked processes (_live_items.ts). */
  readonly #items: LiveItems = new LiveItems();
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
  readonly #wait: BatchWait = new BatchWait(this);
  /** Whether the feeder stopped because canPull() said so; `#wake` resumes it. */
  #paused = false;
  readonly #wake: Resolver<Batch<I>> = { resolve: noop };
  #finished = false;
  #onAbort: (() => void) | undefined = undefined;
  /** A lane's items whose scripts wait for their own job. */
  #starts: LaneStarts | undefined = undefined;

  constructor(
    readonly host: ForkHost,
    readonly operation: string,
    readonly process: (item: I, lang: LangL) => unknown,
    readonly options: CheckedForkOptions,
  ) {}

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
        this.#starts = new LaneStarts(this.process);
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
  protected abstract itemStopped(record: ItemRecord): void;
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
    this.#wait.withdraw();
    for (const record of this.#items.toArray()) record.cancel(cancelReason);
    // A pending next() is left behind: whatever it brings is dropped.
    this.#source?.close();
    this.checkFinished();
  }

  /** The items running now, in the order they were admitted (the scope lists them with its own). */
  liveProcesses(): ProcessRecord[] {
    return this.#items.toArray();
  }

  /** Resumes a feeder that canPull() paused; a no-op otherwise. */
  protected resumeFeeding(): void {
    if (!this.#paused || this.#stopped) return;
    this.#paused = false;
    this.#wake.resolve(this);
  }

  protected checkFinished(): void {
    // All read on every call: a load first reached when the last item stops
    // (V8 had optimised this without it) deoptimised the stop path at the
    // end of each batch after the first. The rest apart, so that V8 inlines
    // this into every item's stop.
    const waiting = this.#wait.waiting;
    const done = this.#stopped || this.#exhausted;
    if (!this.#finished && this.live === 0 && !waiting && done) this.#finish();
  }

  #finish(): void {
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
      this.#wait.wait(item, index);
      return false;
    }
    let record: ItemRecord;
    try {
      record = this.admit(index);
    } catch (error) {
      // Its setup threw (a user clock or logger): the slot goes back, the call fails.
      this.host.core.slots.release();
      this.sourceFailed(error);
      return false;
    }
    const starts = this.#starts;
    // In a lane, the script waits for a job of its own (_lane_starts.ts).
    if (starts === undefined) record.invoke(this.process, item, true);
    else starts.push(record, item);
    return true;
  }

  #exhaust(): void {
    this.#exhausted = true;
    this.checkFinished();
  }

  #pause(): void {
    this.#paused = true;
    // Registered here, where the feeder runs (the batch's own context), so
    // that items pulled after a consumer's read run there too.
    resolvingPromiseFor(this.#wake).then(wakeUp);
  }

  waitFailed(error: unknown): void {
    this.sourceFailed(error);
  }

  runGranted(record: ProcessRecord, item: unknown): void {
    if (this.lane === undefined) {
      record.invoke(this.process, item, true);
      this.pump();
      return;
    }
    // In a lane this reaction, registered in the lane's clean context, is the
    // item's own job: feed first (the next wait is registered here, before any
    // script could change the context), then run the script, last in the job.
    this.pump();
    invokeInLane(record as ItemRecord, this.process, item);
  }

  admit(index: number): ItemRecord {
    const name = this.options.name === undefined ? undefined : `${this.options.name}[${index}]`;
    const record = admitItem(this.host, this.options, name, this, index);
    this.live++;
    this.#items.add(record);
    return record;
  }

  processStopped(record: ProcessRecord): void {
    this.live--;
    this.#items.remove(record as ItemRecord);
    this.itemStopped(record as ItemRecord);
    this.checkFinished();
  }
}
