// The batches between the runtime and a "thread" worker: through a FrameRing
// as JSON when JSON carries them exactly (which is what structured clone
// would make of them), by postMessage otherwise (any other value, a ring
// that is full). Every batch carries a sequence number, so the receiver
// hands them on in the order they were sent, whichever way each came.
import type { Batch } from "./protocol.ts";
import { type FrameRing, rethrowAll } from "./_ring.ts";
import { batchJson } from "./_json_exact.ts";

/** A batch as it crosses: with its place in the sender's order. */
export interface Sequenced<M> extends Batch<M> {
  readonly s: number;
}

/** The first message a worker thread gets: the two rings (runtime to worker, back). */
export interface LaneInit {
  readonly rings: readonly [SharedArrayBuffer, SharedArrayBuffer];
}

/**
 * Batches a worker thread may have sent that the runtime has not taken yet:
 * a worker that sends faster (a script logging in a loop) waits, blocked,
 * for the runtime to catch up, instead of flooding its event loop (a batch
 * is handled in one go; messages that wait are handled one after another).
 */
export const MAX_IN_FLIGHT = 8;

/** How long a worker waits so, at most, before it sends anyway (the runtime is busy). */
export const HOLD_MS = 100;

export class LaneSender<M> {
  #next = 0;

  constructor(
    readonly ring: FrameRing,
    /** postMessage: throws (DataCloneError) if a value cannot be cloned. */
    readonly post: (batch: Sequenced<M>) => void,
    /**
     * Whether to wait for the reader, blocked: MAX_IN_FLIGHT, and a full ring
     * (a worker thread's side; the runtime's never blocks).
     */
    readonly held: boolean = false,
  ) {}

  /** Sends a batch; throws, sending nothing, if it cannot be cloned. */
  send(batch: Batch<M>): void {
    const s = this.#next;
    const until = this.held ? performance.now() + HOLD_MS : 0;
    // Each wait is on the count its check read: a take between the two (the
    // reader runs on another thread) ends the wait at once instead of after
    // HOLD_MS.
    if (this.held) {
      for (;;) {
        const taken = this.ring.taken;
        // The difference as an Int32: the ring's count of taken batches wraps.
        if (((s - taken) | 0) < MAX_IN_FLIGHT || !this.#wait(taken, until)) break;
      }
    }
    const sequenced = { s, now: batch.now, m: batch.m };
    const text = batchJson(sequenced, this.ring.frameLimit);
    let written = false;
    if (text !== undefined) {
      for (;;) {
        const taken = this.held ? this.ring.taken : 0;
        written = this.ring.tryWrite(text);
        // A full ring (not a frame too large for it, in characters or in UTF-8
        // bytes: that fails on an empty ring too).
        if (
          written || !this.held || this.ring.tooLarge || !this.ring.pending ||
          !this.#wait(taken, until)
        ) break;
      }
    }
    if (!written) {
      this.post(sequenced);
      // A reader blocked on the ring must go and read its messages.
      this.ring.postedOne();
    }
    this.#next = s + 1;
  }

  /** Waits for the reader to take a batch after `taken`, until `until`; false once that has passed. */
  #wait(taken: number, until: number): boolean {
    const left = until - performance.now();
    if (left <= 0) return false;
    this.ring.waitTaken(taken, left);
    return true;
  }
}

export class LaneReceiver<M> {
  #next = 0;
  readonly #early = new Map<number, Batch<M>>();

  constructor(readonly deliver: (batch: Batch<M>) => void) {}

  /** Reads what the ring holds. */
  drain(ring: FrameRing): void {
    ring.readAll((text) => this.receive(JSON.parse(text)));
  }

  /** A batch that came as a message: counted taken on `ring`, the sender's. */
  receivePosted(batch: Sequenced<M>, ring: FrameRing): void {
    ring.took(1);
    this.receive(batch);
  }

  /**
   * Delivers `batch` if it is next, then those that came early and are next
   * now. A deliver that throws does not stop the others: a batch left among
   * the early ones after its turn would never be delivered (nothing sent
   * later is next before it). The first error is rethrown once all are
   * delivered (several: an AggregateError).
   */
  receive(batch: Sequenced<M>): void {
    if (batch.s !== this.#next) {
      this.#early.set(batch.s, batch);
      return;
    }
    let errors: unknown[] | undefined;
    let next: Batch<M> | undefined = batch;
    while (next !== undefined) {
      this.#early.delete(this.#next);
      this.#next++;
      try {
        this.deliver(next);
      } catch (error) {
        (errors ??= []).push(error);
      }
      next = this.#early.get(this.#next);
    }
    if (errors !== undefined) rethrowAll(errors, "batches could not be delivered");
  }
}
