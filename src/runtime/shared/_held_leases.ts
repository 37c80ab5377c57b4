// The leases one runtime holds: renewed together, each with a local deadline
// counted from the send time of its last successful renewal (S2), lost when
// that passes, kept idle for a moment after use, and given back in batches.
import { LeaseLostError } from "../../errors.ts";
import type { Clock } from "../clock.ts";
import { LeaseTimer } from "./_lease_timer.ts";
import type { Fence, LeaseStore, ShareView } from "./lease_store.ts";
import { LatestView } from "./_latest_view.ts";
import { LeaseEntry, type StoreHealth } from "./_lease_entry.ts";
import { LeaseDeadlines } from "./_lease_deadlines.ts";
import { ReleaseBatch } from "./_release_batch.ts";

export interface HeldLeasesOptions {
  readonly store: LeaseStore;
  readonly holder: string;
  readonly clock: Clock;
  readonly random: () => number;
  readonly renewEveryMs: number;
  /** Taken off every local deadline, so a cancelled process has that long to stop (S1). */
  readonly stopMarginMs: number;
  readonly idleKeepMs: number;
  /** First delay before retrying a failed renewal. */
  readonly retryMs: number;
  readonly health: StoreHealth;
  /** Capacity may be available again (a lease lost or returned): waiting forks may try. */
  readonly onFreed: () => void;
}

export class HeldLeases {
  readonly #options: HeldLeasesOptions;
  /** How the fleet stands, as the newest view from the store said (S4). */
  readonly #view: LatestView;
  readonly #entries = new Map<Fence, LeaseEntry>();
  readonly #idle: LeaseEntry[] = [];
  /** Lost leases whose process still runs: still this runtime's in the store until it stops. */
  readonly #lostBusy = new Set<Fence>();
  /** Leases handed over that a reply reported before their notice came, given back, and when. */
  readonly #orphans = new Map<Fence, number>();
  readonly #releases: ReleaseBatch;
  /** When the renew timer fires, while it is armed. */
  #renewAt = Infinity;
  #renewing = false;
  /** A renewal asked for while one was in flight: the next one goes no later than this. */
  #renewSoonAt = Infinity;
  #closed = false;
  readonly #renewTimer: LeaseTimer;
  readonly #deadlines: LeaseDeadlines;
  readonly #idleTimer: LeaseTimer;

  constructor(options: HeldLeasesOptions) {
    this.#options = options;
    // Delivery order, not the runtime's time: a wall clock that steps, or a
    // paused virtual one, must not stretch or shrink the window.
    this.#view = new LatestView(() => performance.now());
    this.#renewTimer = new LeaseTimer(options.clock, () => {
      this.#renewAt = Infinity;
      this.#renew();
    });
    this.#deadlines = new LeaseDeadlines(
      options.clock,
      this.#entries,
      (entry) => this.#lose(entry),
    );
    this.#idleTimer = new LeaseTimer(options.clock, () => this.#flushIdle());
    this.#releases = new ReleaseBatch({
      ...options,
      answered: (result) => this.heard(result),
      freed: options.onFreed,
    });
  }

  /** A lease's local life: the store's, less the stop margin. */
  get #localLeaseMs(): number {
    return this.#options.store.leaseMs - this.#options.stopMarginMs;
  }

  /** The last release call, while it is unanswered. */
  get releasing(): Promise<unknown> | undefined {
    return this.#releases.inFlight;
  }

  /** Other holders waiting, as the newest view said (S4). */
  get othersWaiting(): number {
    return this.#view.othersWaiting;
  }

  /** Leases this runtime may keep for its own forks while others wait, as the newest view said. */
  get share(): number {
    return this.#view.share;
  }

  /** Leases held (busy or idle), lost ones excluded. */
  get size(): number {
    return this.#entries.size;
  }

  get idle(): number {
    return this.#idle.length;
  }

  /** Starts holding a lease granted by a call sent at `sentAt`. */
  add(fence: Fence, sentAt: number): LeaseEntry {
    const entry = new LeaseEntry(fence, sentAt + this.#localLeaseMs);
    this.#entries.set(fence, entry);
    if (!this.#renewTimer.armed && !this.#renewing) this.#armRenew(this.#options.renewEveryMs);
    this.#deadlines.added(entry.deadline);
    return entry;
  }

  /** Whether this runtime has heard of `fence` (holds it, runs it lost, gives it back, gave it back unheard-of). */
  heardOf(fence: Fence): boolean {
    return this.#entries.has(fence) || this.#lostBusy.has(fence) || this.#orphans.has(fence) ||
      this.#releases.has(fence);
  }

  /**
   * Starts holding a lease another holder's release handed over, after the
   * call tagged `tag` (its send time) wrote the wait record: S2, the local
   * deadline counts from there. Undefined when that has already passed (the
   * lease goes straight back). The caller has made sure, with `heardOf`, that
   * the lease is new here (not a duplicate notice).
   */
  adopt(fence: Fence, tag: number): LeaseEntry | undefined {
    if (this.#closed) return undefined;
    const { clock, renewEveryMs } = this.#options;
    const remaining = tag + this.#localLeaseMs - clock.now();
    if (!(remaining > 0)) {
      this.#queueRelease(fence);
      return undefined;
    }
    const entry = this.add(fence, tag);
    // Its deadline may come before the batch's next renewal: renew it in time.
    this.#armRenew(Math.min(renewEveryMs, remaining / 2));
    return entry;
  }

  /**
   * Leases the store says were handed to this holder: one it has not heard of
   * lost its notice, and goes back now (adopting it would need a deadline no
   * notice gave); its notice, should it come late, is then ignored.
   */
  unheard(handed: readonly Fence[] | undefined): void {
    if (handed === undefined || handed.length === 0 || this.#closed) return;
    const now = this.#options.clock.now();
    // A notice arriving more than leaseMs after its hand-over is stale anyway (see adopt).
    for (const [fence, at] of this.#orphans) {
      if (at + this.#options.store.leaseMs < now) this.#orphans.delete(fence);
    }
    for (const fence of handed) {
      if (this.heardOf(fence)) continue;
      this.#orphans.set(fence, now);
      this.#queueRelease(fence);
    }
  }

  /** An idle lease, now busy; undefined if none. */
  takeIdle(): LeaseEntry | undefined {
    const entry = this.#idle.pop();
    if (entry !== undefined) entry.busy = true;
    return entry;
  }

  /** Keeps an unused lease for a moment, for a local fork. */
  park(entry: LeaseEntry): void {
    entry.busy = false;
    entry.idleSince = this.#options.clock.now();
    this.#idle.push(entry);
    if (!this.#idleTimer.armed) this.#idleTimer.set(this.#options.idleKeepMs);
  }

  /** Returns a lease to the store: at once, or with the others of its turn (_release_batch.ts). */
  giveBack(entry: LeaseEntry): void {
    entry.busy = false;
    this.#entries.delete(entry.fence);
    this.#lostBusy.delete(entry.fence);
    this.#queueRelease(entry.fence);
  }

  #queueRelease(fence: Fence): void {
    if (!this.#closed) this.#releases.add(fence);
  }

  /** Renews within `ms`, unless a renewal comes sooner already. */
  #armRenew(ms: number): void {
    const at = this.#options.clock.now() + ms;
    if (this.#renewing) {
      this.#renewSoonAt = Math.min(this.#renewSoonAt, at);
    } else if (!this.#renewTimer.armed || at < this.#renewAt) {
      this.#renewAt = at;
      this.#renewTimer.set(ms);
    }
  }

  /**
   * What the store said about the fleet, in a reply or a "granted" notice.
   * A view older than one already taken changes nothing (_latest_view.ts).
   */
  heard(view: ShareView): void {
    this.#view.apply(view);
    this.#othersMayWait();
  }

  /** Another holder started waiting, as of view `seq`: idle leases go back at once, and those above the share (S4). */
  othersWant(share: number, seq: number): void {
    this.#view.wanted(share, seq);
    this.#othersMayWait();
  }

  #othersMayWait(): void {
    if (this.othersWaiting > 0) this.#flushIdle(true);
  }

  /** Stops every timer; returns the fences still to give back (held, or queued for release). */
  close(): Fence[] {
    this.#closed = true;
    for (const timer of [this.#renewTimer, this.#deadlines, this.#idleTimer]) timer.clear();
    const fences = [...this.#entries.keys(), ...this.#lostBusy, ...this.#releases.close()];
    this.#entries.clear();
    this.#lostBusy.clear();
    this.#idle.length = 0;
    return fences;
  }

  async #renew(): Promise<void> {
    if (this.#closed || this.#entries.size === 0) return;
    const { store, holder, clock, health } = this.#options;
    this.#renewing = true;
    const fences = [...this.#entries.keys()];
    const sentAt = clock.now();
    let next = this.#options.renewEveryMs;
    try {
      const result = await store.renew(holder, fences);
      if (this.#closed) return;
      health.recovered();
      const lost = new Set(result.lost);
      for (const fence of fences) {
        const entry = this.#entries.get(fence);
        if (entry === undefined) continue;
        if (lost.has(fence)) this.#lose(entry);
        else entry.deadline = sentAt + this.#localLeaseMs; // S2: from the send time
      }
      this.heard(result);
      this.unheard(result.handed);
      this.#deadlines.arm();
    } catch (error) {
      if (this.#closed) return;
      health.failed("renew", error);
      next = Math.min(next, this.#options.retryMs * (1 + this.#options.random()));
    } finally {
      this.#renewing = false;
    }
    next = Math.min(next, Math.max(0, this.#renewSoonAt - clock.now()));
    this.#renewSoonAt = Infinity;
    if (this.#entries.size > 0) this.#armRenew(next);
  }

  /**
   * Loses now, through `outside` (it may call user code), every lease past
   * its local deadline. After a pause the timers that came due fire in
   * deadline order, so a script's delay would resume it first (S1).
   */
  expireDue(outside: (expire: () => void) => void): void {
    if (this.#deadlines.due) outside(() => this.#deadlines.expire());
  }

  /** The local deadline passed, or the store no longer has it: the process must stop. */
  #lose(entry: LeaseEntry): void {
    this.#entries.delete(entry.fence);
    const idleAt = this.#idle.indexOf(entry);
    if (idleAt >= 0) this.#idle.splice(idleAt, 1);
    const { store } = this.#options;
    entry.lose(new LeaseLostError(store.key, store.leaseMs));
    if (!entry.busy) this.giveBack(entry); // a busy one goes back when its process stops
    else {
      this.#lostBusy.add(entry.fence);
      this.#options.health.lostInUse(entry.fence);
    }
    this.#options.onFreed();
  }

  #flushIdle(all = false): void {
    // Every view that says others wait lands here, a hand-over's among them: mostly with nothing idle.
    if (this.#idle.length === 0) return;
    const cutoff = this.#options.clock.now() - this.#options.idleKeepMs;
    for (const entry of this.#idle.splice(0)) {
      if (all || entry.idleSince <= cutoff) this.giveBack(entry);
      else this.#idle.push(entry);
    }
    if (this.#idle.length > 0) this.#idleTimer.set(this.#options.idleKeepMs);
  }
}
