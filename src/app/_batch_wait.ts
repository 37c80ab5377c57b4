// A batch's place in the pool's line: at most one of its items waits for a
// slot at a time, however many items the batch has. Granted, the item is
// admitted at once (it holds the slot), and its script runs one reaction
// later, in the batch's own async context.
import { SlotWaiter } from "../runtime/slot_pool.ts";
import { type Resolver, resolvingPromiseFor } from "../_settler.ts";
import type { ProcessRecord } from "./process.ts";
import { outsideScripts, type ScriptLane } from "./_guard.ts";
import type { ForkHost } from "./_fork_host.ts";

/** What the wait needs of its batch. */
export interface WaitingBatch {
  readonly host: ForkHost;
  readonly priority: number;
  readonly lane: ScriptLane | undefined;
  /** Admits the item with this index; throws what its setup throws. */
  admit(index: number): ProcessRecord;
  /** Runs the granted item's script and goes on feeding. */
  runGranted(record: ProcessRecord, item: unknown): void;
  /** The wait failed: the pool could not queue it, or the item's setup threw. */
  waitFailed(error: unknown): void;
}

const noop = () => {};

// Registered by the feeder, so in the context the batch was called in (the
// lane's, for an array), whoever settles it.
function resumeAfterGrant(wait: BatchWait): void {
  const lane = wait.batch.lane;
  if (lane === undefined) wait.resume();
  else lane.internal(resumeGranted, wait);
}

function resumeGranted(wait: BatchWait): void {
  wait.resume();
}

export class BatchWait extends SlotWaiter {
  /** Whether an item sits in the pool's line. */
  waiting = false;
  #item: unknown = undefined;
  #index = 0;
  #granted: ProcessRecord | undefined = undefined;
  readonly #grant: Resolver<BatchWait> = { resolve: noop };

  static {
    // The grant fulfils a promise with this wait, and fulfilling with an
    // object looks up its `then`: without one anywhere, the lookup walks the
    // whole prototype chain (see ForkedRecord), once per wave of a batch.
    // No user code ever holds a wait.
    Object.defineProperty(this.prototype, "then", { value: undefined });
  }

  constructor(readonly batch: WaitingBatch) {
    // Its own owner: the scope's mass withdrawal leaves it alone; the batch
    // withdraws it when told the scope was cancelled.
    super(undefined);
  }

  get priority(): number {
    return this.batch.priority;
  }

  /** Queues the item; call only from the feeder, in the batch's own context. */
  wait(item: unknown, index: number): void {
    this.#item = item;
    this.#index = index;
    this.waiting = true;
    // Registered here, in the batch's own async context (the feeder runs only
    // where no script has run before it in the same job), so that the granted
    // item runs there too (see _queued_fork.ts), whoever releases the slot.
    resolvingPromiseFor(this.#grant).then(resumeAfterGrant);
    try {
      this.batch.host.core.slots.enqueue(this);
    } catch (error) {
      // The pool could not queue it (a sleep on a broken clock).
      this.waitFailed(error);
    }
  }

  /** Takes the waiting item out of the line, unless it was granted already. */
  withdraw(): void {
    if (this.waiting && this.batch.host.core.slots.withdraw(this)) {
      this.waiting = false;
      this.#item = undefined;
    }
  }

  slotGranted(): void {
    // The slot is taken now; the item's script runs one reaction later.
    this.waiting = false;
    try {
      this.#granted = this.batch.admit(this.#index);
    } catch (error) {
      // Its setup threw (a user clock or logger): the slot goes back one
      // microtask later (a release here would recurse through the line).
      // Outside any mark: the release must not be taken for a script's, and
      // the batch's failure reaches user code (its source, abort listeners).
      outsideScripts(() => this.#admissionFailed(error));
      return;
    }
    this.#grant.resolve(this);
  }

  #admissionFailed(error: unknown): void {
    const slots = this.batch.host.core.slots;
    queueMicrotask(() => slots.release());
    this.waitFailed(error);
  }

  waitFailed(reason: unknown): void {
    this.waiting = false;
    this.#item = undefined;
    this.batch.waitFailed(reason);
  }

  /** Runs the granted item, then the batch goes on feeding. */
  resume(): void {
    const record = this.#granted!;
    const item = this.#item;
    this.#granted = this.#item = undefined;
    this.batch.runGranted(record, item);
  }
}
