// The batches between the runtime and a "thread" worker: through a FrameRing
// as JSON when JSON carries them exactly (which is what structured clone
// would make of them), by postMessage otherwise (any other value, a ring
// that is full). Every batch carries a sequence number, so the receiver
// hands them on in the order they were sent, whichever way each came.
import type { Batch } from "./protocol.ts";
import type { FrameRing } from "./_ring.ts";
import { batchJson } from "./_json_exact.ts";

/** A batch as it crosses: with its place in the sender's order. */
export interface Sequenced<M> extends Batch<M> {
  readonly s: number;
}

/** The first message a worker thread gets: the two rings (runtime to worker, back). */
export interface LaneInit {
  readonly rings: readonly [SharedArrayBuffer, SharedArrayBuffer];
}

export class LaneSender<M> {
  #next = 0;

  constructor(
    readonly ring: FrameRing,
    /** postMessage: throws (DataCloneError) if a value cannot be cloned. */
    readonly post: (batch: Sequenced<M>) => void,
  ) {}

  /** Sends a batch; throws, sending nothing, if it cannot be cloned. */
  send(batch: Batch<M>): void {
    const s = this.#next;
    const sequenced = { s, now: batch.now, m: batch.m };
    const text = batchJson(sequenced, this.ring.frameLimit);
    if (text === undefined || !this.ring.tryWrite(text)) {
      this.post(sequenced);
      // A reader blocked on the ring must go and read its messages.
      this.ring.postedOne();
    }
    this.#next = s + 1;
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

  receive(batch: Sequenced<M>): void {
    if (batch.s !== this.#next) {
      this.#early.set(batch.s, batch);
      return;
    }
    // This one, then those that came early and are next now.
    let next: Batch<M> | undefined = batch;
    while (next !== undefined) {
      this.#early.delete(this.#next);
      this.#next++;
      this.deliver(next);
      next = this.#early.get(this.#next);
    }
  }
}
