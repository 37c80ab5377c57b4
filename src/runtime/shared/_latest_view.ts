// How the fleet stands (S4: whether other holders wait, and this runtime's
// share), as the newest word from the store says. That word comes on two
// connections in no set order between them: replies to this runtime's calls,
// and pub/sub notices ("wanted", "granted"). Each carries the number of the
// store call that computed it (ShareView.seq), and only a view newer than the
// one applied counts: a notice computed before a reply already heard, or a
// reply computed before a notice already heard, changes nothing.
import type { ShareView } from "./lease_store.ts";

/**
 * How long after applying a view an older number is refused, in local time.
 * Replies and notices overtake each other by milliseconds; a number still
 * older after this long means the store's count went back (a restart that lost
 * it while Redis's clock stepped back, a failover to a replica behind), and
 * refusing it any longer would leave this runtime blind to waiters (S4).
 */
export const STALE_VIEW_WINDOW_MS = 1_000;

export class LatestView {
  /** Other holders waiting, as the newest view said. */
  othersWaiting = 0;
  /** Leases this runtime may keep for its own forks while others wait, as the newest view said. */
  share = Infinity;
  /** The number of the view applied last. */
  #seq = -Infinity;
  /** When (local clock) the last view was applied. */
  #appliedAt = -Infinity;
  readonly #now: () => number;

  /** `now`: a monotonic clock in ms (`performance.now`). */
  constructor(now: () => number) {
    this.#now = now;
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
    const now = this.#now();
    // An older number past the window: the count went back (see
    // STALE_VIEW_WINDOW_MS). A notice that late after a newer reply, which
    // only a stall that long can make, is then taken too: it is wrong only
    // until the next view (a renewal at the latest).
    if (seq > this.#seq || now - this.#appliedAt >= STALE_VIEW_WINDOW_MS) {
      this.#seq = seq;
      this.#appliedAt = now;
      return true;
    }
    return false;
  }
}
