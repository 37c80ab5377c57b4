// The two kinds of process record. A forkProcess record can be awaited and
// settles its first await itself; a forkAll item's record knows its batch
// and index instead. Each kind carries only its own fields: every field is
// paid on every fork of that kind.
import type { ScriptLane } from "./_guard.ts";
import { type ProcessBatch, type ProcessOwner, ProcessRecord } from "./process.ts";
import type { Settler } from "../_settler.ts";
import type { QueueNode } from "../_linked_queue.ts";
import { deliverOutcome } from "./_process_stop.ts";

/** A new process record, an item's if it has a batch. */
export function newRecord(
  owner: ProcessOwner,
  id: number,
  name: string | undefined,
  batch: ProcessBatch | undefined,
  index: number,
): ProcessRecord {
  return batch === undefined
    ? new ForkedRecord(owner, id, name)
    : new ItemRecord(owner, id, name, batch, index);
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
