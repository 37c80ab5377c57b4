// forkStream: the pooledMap of procpool. Results come out in input order as
// the consumer reads them; items are pulled only while fewer than
// maxProcesses of them are ahead of what the consumer has taken, so memory
// stays bounded for any input. Failures are forkAll's; leaving the loop
// early (return()) cancels the items in flight and waits for them. The
// feeding is Batch's (_batch.ts).
import { ProcessCancelledError } from "../errors.ts";
import type { LangL } from "../lang/lang.ts";
import type { CheckedForkOptions } from "./_options.ts";
import type { ProcessRecord } from "./process.ts";
import type { ItemRecord } from "./_records.ts";
import { Batch } from "./_batch.ts";
import type { ForkHost } from "./_fork_host.ts";
import { LinkedQueue, QueueNode } from "../_linked_queue.ts";

/** Somebody's next() or return(), waiting for the stream. */
class Read<T> extends QueueNode {
  constructor(
    readonly resolve: (step: IteratorResult<T, undefined>) => void,
    readonly reject: (reason: unknown) => void,
  ) {
    super();
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });
const EMPTY = Symbol("empty");

/** Told when a scope's body has ended (forkStream closes what nobody finished reading). */
export interface BodyEndListener {
  bodyEnded(): void;
}

export class ForkStream<I, T> extends Batch<I>
  implements AsyncIterableIterator<T>, BodyEndListener {
  /** Results by index modulo capacity: at most that many are ever ahead. */
  readonly #ring: (T | typeof EMPTY)[];
  /** Results handed to the consumer so far. */
  #taken = 0;
  readonly #reads = new LinkedQueue<Read<T>>();
  /** The failure the next read rejects with, once every item has stopped. */
  #failure: { error: unknown; record?: ProcessRecord } | undefined = undefined;
  /** Set once the consumer has seen the end (done, the failure, or return()). */
  #ended = false;
  /** return() was called, or the body ended: nobody will read the rest. */
  #closed = false;
  readonly #closing: Read<T>[] = [];

  constructor(
    host: ForkHost,
    items: Iterable<I> | AsyncIterable<I>,
    process: (item: I, lang: LangL) => Promise<T> | T,
    options: CheckedForkOptions,
  ) {
    super(host, "forkStream", process, options);
    this.#ring = new Array(host.core.slots.max).fill(EMPTY);
    this.begin(items);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    return new Promise((resolve, reject) => {
      this.#reads.push(new Read(resolve, reject));
      this.#deliver();
    });
  }

  /** Stops reading: cancels the items in flight and resolves once they have stopped. */
  return(): Promise<IteratorResult<T, undefined>> {
    return new Promise((resolve, reject) => {
      this.#close();
      if (this.isFinished) resolve(DONE);
      else this.#closing.push(new Read(resolve, reject));
    });
  }

  bodyEnded(): void {
    // A read still pending gets the failure once the items have stopped.
    if (this.#failure !== undefined && this.#reads.size > 0) return;
    this.#close();
  }

  scopeCancelled(): void {
    this.#fail(this.host.closedError());
  }

  protected aborted(reason: unknown): void {
    this.#fail(reason);
  }

  protected sourceFailed(error: unknown): void {
    this.#fail(error);
  }

  protected override canPull(): boolean {
    return this.pulled - this.#taken < this.#ring.length;
  }

  protected itemStopped(record: ItemRecord): void {
    if (record.status === "succeeded") {
      if (!this.#closed && this.#failure === undefined) {
        this.#ring[record.tag % this.#ring.length] = record.value as T;
        this.#deliver();
      }
    } else if (this.#failure === undefined && !this.#closed) {
      // The stream delivers this failure to its reader, so the scope need
      // not re-raise it (unless nobody reads it: see #close).
      record.markObserved();
      this.#fail(record.error, record);
    }
  }

  protected finished(): void {
    for (const read of this.#closing.splice(0)) read.resolve(DONE);
    this.#deliver();
  }

  protected override leaveScope(): void {
    // Until its reader has seen the end, the scope may still have to close it.
    if (this.#ended) this.host.removeDependent(this);
  }

  #fail(error: unknown, record?: ProcessRecord): void {
    if (this.#failure !== undefined || this.#closed) return;
    this.#failure = { error, record };
    this.#ring.fill(EMPTY);
    this.stopFeeding(
      new ProcessCancelledError("a sibling in forkStream did not succeed", { cause: error }),
    );
    this.#deliver();
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#ring.fill(EMPTY);
    // A failure nobody will read goes back to the scope, never lost.
    const undelivered = this.#ended ? undefined : this.#failure?.record;
    if (undelivered !== undefined) this.host.failureHandedBack(undelivered);
    this.#ended = true;
    if (this.isFinished) this.host.removeDependent(this);
    this.stopFeeding(new ProcessCancelledError("the forkStream consumer stopped reading"));
    for (let read = this.#reads.shift(); read; read = this.#reads.shift()) read.resolve(DONE);
  }

  /** Hands out what can be handed out, in input order. */
  #deliver(): void {
    const ring = this.#ring;
    for (let read = this.#reads.peek(); read !== undefined; read = this.#reads.peek()) {
      if (this.#ended) {
        this.#reads.shift()!.resolve(DONE);
        continue;
      }
      if (this.#failure !== undefined) {
        if (!this.isFinished) return;
        this.#ended = true;
        this.host.removeDependent(this);
        this.#reads.shift()!.reject(this.#failure.error);
        continue;
      }
      const slot = this.#taken % ring.length;
      const value = ring[slot];
      if (value !== EMPTY) {
        ring[slot] = EMPTY;
        this.#taken++;
        this.#reads.shift()!.resolve({ done: false, value });
        this.resumeFeeding();
        continue;
      }
      if (!this.isFinished) return;
      this.#ended = true;
      this.host.removeDependent(this);
    }
  }
}
