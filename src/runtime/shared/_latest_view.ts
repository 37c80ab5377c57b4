// How the fleet stands (S4: whether other holders wait, and this runtime's
// share), as the newest word from the store says. That word comes on two
// connections in no set order between them: replies to this runtime's calls,
// and pub/sub notices ("wanted", "granted"). Each carries the number of the
// store call that computed it (ShareView.seq), and only a view newer than the
// one applied counts: a notice computed before a reply already heard, or a
// reply computed before a notice already heard, changes nothing.
import type { ShareView } from "./lease_store.ts";

export class LatestView {
  /** Other holders waiting, as the newest view said. */
  othersWaiting = 0;
  /** Leases this runtime may keep for its own forks while others wait, as the newest view said. */
  share = Infinity;
  /** The number of the view applied last. */
  #seq = -Infinity;
  /** A number this far below the last one applied means the store lost its count. */
  readonly #resetGap: number;

  /** `leaseMs`: the store's lease time, which bounds how far back a lost count can go unnoticed. */
  constructor(leaseMs: number) {
    this.#resetGap = leaseMs * 1_000; // seq counts in µs (ShareView.seq)
  }

  /** Takes `view` if it is newer than the last one taken; true if it did. */
  apply(view: ShareView): boolean {
    if (!this.#newer(view.seq)) return false;
    this.othersWaiting = view.othersWaiting;
    this.share = view.share;
    return true;
  }

  /** A "wanted" notice of view `seq`: another holder started waiting, and the share is `share`. */
  wanted(share: number, seq: number): boolean {
    if (!this.#newer(seq)) return false;
    // It names one waiter; the count is not in the notice, only that it is not 0.
    this.othersWaiting = Math.max(this.othersWaiting, 1);
    this.share = share;
    return true;
  }

  #newer(seq: number): boolean {
    // Far below: the store lost its count (a restart, a stray DEL) and its
    // clock went back. Refusing every view until the count caught up would
    // leave this runtime blind to waiters for that long; taking a very late
    // notice instead costs only until the next view (a renewal at the latest).
    if (seq > this.#seq || seq < this.#seq - this.#resetGap) {
      this.#seq = seq;
      return true;
    }
    return false;
  }
}
