// The seam between a runtime's lease manager and the store that keeps a shared
// capacity (API.md "Shared capacity"). It is store-neutral: Redis implements it
// now (redis_store.ts), Deno KV can later. Every call is one round trip and is
// atomic in the store; every deadline is kept on the store's clock.

/** A lease granted by the store; its fencing token doubles as its id. */
export type Fence = number;

/**
 * How the fleet stood when one store call ran (S4). A runtime hears such views
 * on two connections, in replies and in notices, in no set order between
 * them: `seq` tells which is newer, and an older one is ignored.
 */
export interface ShareView {
  /** How many *other* holders are waiting for leases right now (S4: give idle leases back). */
  readonly othersWaiting: number;
  /**
   * Leases a holder may keep for its own forks while others wait (S4): an
   * equal share, rounded down. Above it, a freed lease goes back to the store.
   */
  readonly share: number;
  /**
   * The view's number: each store call that computes a view takes the next
   * one, per key, atomically, and every reply and notice of that call
   * carries it. It counts in µs of the store's clock (one more than the last,
   * and never below that clock), so a store that lost its count (a restart
   * without persistence, a stray DEL) goes on above it unless its clock went
   * back. If it did (or a replica behind took over), the lease manager
   * refuses older numbers for one second after the last view it applied,
   * then applies them and goes on from there.
   */
  readonly seq: number;
}

/** What every call but release reports about the rest of the fleet. */
export interface FleetView extends ShareView {
  /**
   * Milliseconds (store clock) until the earliest lease deadline on the key,
   * or -1 without leases: a waiter wakes then, since expiry publishes nothing.
   */
  readonly earliestMs: number;
  /**
   * Leases that releases of other holders handed to this holder since its last
   * call, each reported once (live ones only). A holder that does not know
   * one missed its "granted" notice and gives it back. Absent: none.
   */
  readonly handed?: readonly Fence[];
}

/**
 * What a subscription hears: leases released (and not handed over), a holder
 * starting to wait (and the new share, with the number of the view it comes
 * from, as in {@linkcode ShareView.seq}), or leases a release handed straight
 * to a waiting holder. `tag` is the one that holder sent with the call that
 * last wrote its wait record, before the hand-over; `view`, when the store
 * gives it, is the fleet just after the hand-over, as that holder sees it.
 */
export type Notice =
  | { readonly kind: "released" }
  | {
    readonly kind: "wanted";
    readonly holder: string;
    readonly share: number;
    readonly seq: number;
  }
  | {
    readonly kind: "granted";
    readonly holder: string;
    readonly fences: readonly Fence[];
    readonly tag: number;
    readonly view?: ShareView;
  };

/** The answer to {@linkcode LeaseStore.acquire}. */
export interface AcquireResult extends FleetView {
  /** The leases granted, in increasing fence order; possibly fewer than asked, possibly none. */
  readonly granted: readonly Fence[];
}

/** The answer to {@linkcode LeaseStore.renew}. */
export interface RenewResult extends FleetView {
  /** Leases that were no longer this holder's (expired and reclaimed): not renewed. */
  readonly lost: readonly Fence[];
}

/**
 * The answer to {@linkcode LeaseStore.release}. Its `othersWaiting` counts
 * the other holders waiting after the hand-over (they were woken if
 * `released` > 0).
 */
export interface ReleaseResult extends ShareView {
  /** How many of the given leases were still held and went back. */
  readonly released: number;
  /** How many new leases went straight to waiting holders (at most `released`; absent: none). */
  readonly handedOver?: number;
}

/**
 * A subscription to release notices. It exists at once, so it can be closed
 * even while the store is unreachable and `ready` still pending.
 */
export interface ReleaseSubscription {
  /** Resolves once notices flow; rejects if subscribing failed (the subscription is then dead). */
  readonly ready: Promise<void>;
  /** Ends the subscription and closes its connection; never waits long on an unreachable store. */
  close(): Promise<void>;
}

/**
 * One shared capacity (key, limit, leaseMs) in one store. `holder` names a
 * runtime: unique per runtime instance, stable for its life.
 *
 * Errors: a limit that disagrees with the store's (S7) rejects with
 * `CapacityMismatchError`; an unreachable store rejects with the client's error.
 */
export interface LeaseStore {
  readonly key: string;
  readonly limit: number;
  readonly leaseMs: number;
  /**
   * Asks for `want` leases. Grants what is free, capped at an equal share while
   * other holders wait (S4), and records the holder as waiting for the rest
   * (replacing any earlier wait record; `want` is the whole unmet demand).
   * `tag` (default 0) is kept with the wait record and named in "granted"
   * notices: the manager passes the call's send time on its own clock.
   */
  acquire(holder: string, want: number, tag?: number): Promise<AcquireResult>;
  /** A name for a new holder, if the store wants its own (default: a random UUID). */
  newHolder?(): string;
  /** Extends every given live lease of `holder` to leaseMs from now; reports those lost. */
  renew(holder: string, fences: readonly Fence[]): Promise<RenewResult>;
  /**
   * Gives leases back. While other holders wait, each freed lease is granted
   * at once, as a new lease with a new fence, to the waiter holding the fewest
   * (within the equal share, S4), and "granted" is published for it; what is
   * left publishes "released" when others still wait.
   */
  release(holder: string, fences: readonly Fence[]): Promise<ReleaseResult>;
  /** Sets how many leases `holder` waits for (0 withdraws); refreshes the wait record. A
   * holder that starts waiting (here or in acquire) publishes "wanted" (a store may leave out
   * the holders whose last view already says that others wait, with that share). `tag` as in
   * acquire. */
  wait(holder: string, want: number, tag?: number): Promise<FleetView>;
  /**
   * Calls `onNotice` for each notice on this key, from a connection of its
   * own: "released" when leases went back while others wait, "wanted" when a
   * holder starts waiting, and "granted" when a release handed leases to
   * `holder` (grants to other holders need not be heard).
   */
  subscribe(onNotice: (notice: Notice) => void, holder: string): ReleaseSubscription;
}
