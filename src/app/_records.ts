// The two kinds of process record. A forkProcess record can be awaited and
// settles its first await itself; a forkAll item's record knows its batch
// and index instead. Each kind carries only its own fields: every field is
// paid on every fork of that kind.
import type { ScriptLane } from "./_guard.ts";
import type { LangL } from "../lang/lang.ts";
import { type ProcessBatch, type ProcessOwner, ProcessRecord, SUCCEEDED } from "./process.ts";
import { callMarked, whenSettled } from "./_guard.ts";
import type { Settler } from "../_settler.ts";
import type { QueueNode } from "../_linked_queue.ts";
import { deliverOutcome } from "./_process_stop.ts";
import type { CheckedForkOptions } from "./_options.ts";
import { admitUnderLease } from "./_lease_admission.ts";

/**
 * Admits an item of `batch` without running its script yet (see
 * Scope.admitForked, whose transactional setup this shares). Its scope does
 * not list it: a batch keeps its items itself (_live_items.ts).
 */
export function admitItem(
  owner: ProcessOwner,
  options: CheckedForkOptions,
  name: string | undefined,
  batch: ProcessBatch,
  index: number,
): ItemRecord {
  const core = owner.core;
  const record = new ItemRecord(owner, core.nextProcessId(), name, batch, index);
  const shared = core.shared;
  if (shared === undefined) record.begin(options);
  else admitUnderLease(record, options, shared);
  return record;
}

/**
 * A forkProcess or tryForkProcess record. The first await without options
 * from its own scope, the most common await of all, needs no object of its
 * own: the record holds its promise's resolvers and is its own first stop
 * waiter, and the scope reaches it through the record to give it up
 * (giveUpOwnerWait), so it takes no place in the scope's list of waits. A
 * QueueNode (its link fields declared here rather than inherited, one
 * constructor fewer), so that its scope keeps its running processes in an
 * O(1) intrusive list rather than a hashed Set.
 */
export class ForkedRecord extends ProcessRecord implements QueueNode, Settler<unknown> {
  /** @internal */ declare _prev: QueueNode | undefined;
  /** @internal */ declare _next: QueueNode | undefined;
  declare resolve: (value: unknown) => void;
  declare reject: (reason: unknown) => void;

  // Assigned, not class fields: V8 runs a subclass's field initializers as a
  // call of their own at every construction (BENCHMARKS.md, "fork+await
  // after `98e1147`": 38-40 against 40-61 ns per record in a scratch loop).
  constructor(owner: ProcessOwner, id: number, name: string | undefined) {
    super(owner, id, name);
    this._prev = undefined;
    this._next = undefined;
    this.resolve = noop;
    this.reject = noop;
  }

  static {
    // A queued fork's grant fulfils a promise with its record, and fulfilling
    // with an object looks up its `then`: without one anywhere, the lookup
    // walks the whole prototype chain, about 0.15 µs of every hand-off. The
    // only user code that ever holds a record is an OpenTelemetry context
    // manager, which passes it on to procpool's own callback: to it a
    // `then` of undefined is what any plain object has.
    Object.defineProperty(this.prototype, "then", { value: undefined });
  }

  /**
   * Runs a forkProcess script, `fn(lang)`, marked by this record, in the
   * caller's async context (a queued fork's: see _queued_fork.ts). A process
   * with extras may have a probe: ProcessRecord.invoke, which handles one.
   * The rest is invoke's path, unrolled: a queued fork's grant runs this in
   * its hand-off's second job, before the script's first line.
   */
  start(fn: (lang: LangL) => unknown): void {
    if (this._extras !== undefined) return this.invoke(fn);
    let result: unknown;
    try {
      result = callMarked(this, fn, this._lang);
    } catch (error) {
      // As in invoke: settled asynchronously even for a synchronous throw.
      result = Promise.reject(error);
    }
    whenSettled(result, this.returned.bind(this), this._threw.bind(this));
  }

  /**
   * ProcessRecord.returned for a process that is no batch's item: the same
   * steps in announceStop's order, with the scope's own shortcut
   * (Scope.forkedReturned), on the path of every hand-off from a process
   * nobody awaits. A step added to announceStop for every process must be
   * added here too.
   */
  override returned(value: unknown): void {
    if (this._extras !== undefined || this._stopWaiter !== undefined || this._flags !== 0) {
      return this.stop(true, value);
    }
    const owner = this.owner;
    const core = owner.core;
    this._flags = SUCCEEDED;
    this._outcome = value;
    core.succeeded++;
    owner.forkedReturned(this);
    core.slots.release();
    this._lang = undefined;
  }

  processStopped(record: ProcessRecord): void {
    const resolve = this.resolve;
    const reject = this.reject;
    this.resolve = this.reject = noop;
    deliverOutcome(record, resolve, reject);
  }

  /** Its scope was cancelled: the first await rejects with `reason` (see giveUpOwnerWait). */
  giveUp(reason: unknown): void {
    const reject = this.reject;
    this.resolve = this.reject = noop;
    reject(reason);
  }
}

const noop = () => {};

export class ItemRecord extends ProcessRecord {
  readonly #batch: ProcessBatch;

  constructor(
    owner: ProcessOwner,
    id: number,
    name: string | undefined,
    batch: ProcessBatch,
    /** The item's index in its batch. */
    readonly tag: number,
  ) {
    super(owner, id, name);
    this.#batch = batch;
  }

  override get batch(): ProcessBatch {
    return this.#batch;
  }

  /** The lane the script runs in (forkAll over an array). */
  get lane(): ScriptLane | undefined {
    return this.#batch.lane;
  }
}

/**
 * An item record and a forked record that never run, kept for the module's
 * life, and their LangL objects with them. V8 reaches the hidden class
 * ("map") of a class's finished instances from the class only through weak
 * links, so a full GC that finds no instance drops it, and every function
 * optimised for it is thrown away with it (`--trace-deopt`: "embedded weak
 * objects cleared", 19-46 functions at each such GC). A forkAll after one (a
 * long-lived program's major GC between batches, or the benchmark's forced
 * GC before each run) then ran from unoptimised code: forkAll over 200 000
 * items took 190-220 ms instead of 110-125 ms (BENCHMARKS.md, "forkAll after
 * 6d497a9"; the test is tests/fork_all_gc_deopt_test.ts). The forked record
 * (FORKED_MAP_KEEPER) does the same for fork+await, whose handle keeps one
 * too (_handle.ts): without them, runGranted, awaitResult, awaitedRecord,
 * handleFor, recordOf and the handle's methods were thrown away at each such
 * GC (tests/fork_await_deopt_test.ts).
 */
export const MAP_KEEPER: ItemRecord = new ItemRecord(
  { core: undefined } as unknown as ProcessOwner,
  0,
  undefined,
  { lane: undefined } as unknown as ProcessBatch,
  0,
);

/** A forked record that never runs, kept for the module's life (see MAP_KEEPER). */
export const FORKED_MAP_KEEPER: ForkedRecord = new ForkedRecord(
  { core: undefined } as unknown as ProcessOwner,
  0,
  undefined,
);
