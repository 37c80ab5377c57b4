// One per runtime: the forks waiting for a lease on a shared capacity, and the
// leases it holds (_held_leases.ts), API.md S1–S6. Forks never talk to the
// store themselves; the manager batches them: one acquire for all the forks
// waiting, one renew for all held leases, the releases of a turn in at most two
// calls (the first at once).
// The runtime's SharedSlotPool (shared_slot_pool.ts) is its only user.
import { LinkedQueue } from "../../_linked_queue.ts";
import { CapacityMismatchError } from "../../errors.ts";
import type { Clock } from "../clock.ts";
import { monotonicClock } from "./_monotonic_clock.ts";
import { HeldLeases } from "./_held_leases.ts";
import { withdrawWait } from "./_leaving_store.ts";
import { settleWithin } from "./_settle_within.ts";
import type { Lease, LeaseEntry } from "./_lease_entry.ts";
import { LeaseTimer } from "./_lease_timer.ts";
import type { LeaseStore, Notice } from "./lease_store.ts";
import { NoticeChannel } from "./_notice_channel.ts";
import { PollBackoff, type PollDelay } from "./_poll_backoff.ts";
import { StoreHealthLog } from "./_store_health.ts";
import { WaitRecord } from "./_wait_record.ts";
import { WatchedStore } from "./_watched_store.ts";
import { type LeaseManagerOptions, type LeaseWaiter, thirdOfLeaseMs } from "./_lease_contracts.ts";

export type { Lease, LeaseLossListener } from "./_lease_entry.ts";
export { type LeaseLogger, type LeaseManagerOptions, LeaseWaiter } from "./_lease_contracts.ts";

/** Dispose gives up returning leases after this long (S6); they expire in the store. */
const DISPOSE_LIMIT_MS = 1_000;

export class LeaseManager {
  readonly holder: string;
  readonly #store: LeaseStore;
  readonly #maxHeld: number;
  readonly #clock: Clock;
  readonly #poll: PollBackoff;
  readonly #held: HeldLeases;
  readonly #waiters = new LinkedQueue<LeaseWaiter>();
  readonly #record = new WaitRecord();
  #acquiring = false;
  #pumpQueued = false;
  #acquireAgain = false;
  #newDemand = false;
  #disposed = false;
  readonly #health: StoreHealthLog;
  readonly #notices: NoticeChannel;
  readonly #wake: LeaseTimer;
  readonly #watched: WatchedStore | undefined = undefined;

  constructor(store: LeaseStore, options: LeaseManagerOptions) {
    // Named by the store itself when it asks to (Redis keeps the limit in the name).
    this.holder = options.holder ?? store.newHolder?.() ?? crypto.randomUUID();
    const health = this.#health = new StoreHealthLog(store.key, options.logger);
    if (options.slowCallMs !== undefined) {
      store = this.#watched = new WatchedStore(store, health, options.slowCallMs);
    }
    this.#store = store;
    this.#maxHeld = options.maxHeld;
    this.#clock = options.clock ?? monotonicClock;
    const random = options.random ?? Math.random;
    const pollMinMs = options.pollMinMs ?? 50;
    const pollMaxMs = options.pollMaxMs ?? thirdOfLeaseMs(store.leaseMs);
    this.#poll = new PollBackoff(pollMinMs, pollMaxMs, random);
    this.#wake = new LeaseTimer(this.#clock, () => this.#pump());
    this.#notices = new NoticeChannel(
      store,
      this.holder,
      this.#clock,
      options.logger,
      (notice) => this.#heard(notice),
    );
    this.#held = new HeldLeases({
      store,
      holder: this.holder,
      clock: this.#clock,
      random,
      renewEveryMs: options.renewEveryMs ?? Math.floor(store.leaseMs / 3),
      stopMarginMs: options.stopMarginMs ?? 0,
      idleKeepMs: options.idleKeepMs ?? 5,
      retryMs: pollMinMs,
      health,
      onFreed: () => {
        if (this.#waiters.size > 0) this.#pump();
      },
    });
  }

  /** Leases this runtime believes it holds (busy or idle), lost ones excluded. */
  get held(): number {
    return this.#held.size;
  }

  /** Loses the leases whose local deadline has passed (HeldLeases.expireDue). */
  expireDue(outside: (expire: () => void) => void): void {
    this.#held.expireDue(outside);
  }

  /** Held leases no process uses right now. */
  get idle(): number {
    return this.#held.idle;
  }

  /** Forks waiting for a lease. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** A held idle lease, now this caller's, or undefined (S5: never waits, never calls the store). */
  tryTake(): Lease | undefined {
    return this.#held.takeIdle();
  }

  /**
   * Queues `waiter` for a lease; `leaseGranted` runs later. Call
   * {@linkcode tryTake} first. After dispose, `leaseRefused` runs at once.
   */
  enqueue(waiter: LeaseWaiter): void {
    if (this.#disposed) {
      return waiter.leaseRefused(new Error("the lease manager has been disposed"));
    }
    this.#waiters.push(waiter);
    // Forks queued in one turn go to the store in one acquire.
    if (!this.#pumpQueued) {
      this.#pumpQueued = true;
      queueMicrotask(() => {
        this.#pumpQueued = false;
        this.#pump(true);
      });
    }
  }

  /** Leaves the queue; false if the waiter was already served. */
  withdraw(waiter: LeaseWaiter): boolean {
    if (!this.#waiters.remove(waiter)) return false;
    if (this.#waiters.size === 0 && this.#record.want > 0) this.#pump(); // tell the store
    return true;
  }

  /**
   * A process holding `lease` has stopped. While other runtimes wait, a lease
   * above this runtime's share goes back to the store (S4); otherwise it goes
   * to a local fork, or idles a moment (not while others wait).
   */
  release(lease: Lease): void {
    const entry = lease as LeaseEntry;
    const held = this.#held;
    const othersWait = held.othersWaiting > 0;
    if (entry.lost || this.#disposed || (othersWait && held.size > held.share)) {
      return held.giveBack(entry);
    }
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      entry.busy = true;
      return waiter.leaseGranted(entry);
    }
    if (othersWait) held.giveBack(entry);
    else held.park(entry);
  }

  /**
   * Refuses every waiter with `reason`, returns every lease to the store
   * (giving up after a second, S6) and closes the subscription. Idempotent.
   */
  async dispose(reason: unknown = new Error("the lease manager has been disposed")): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#wake.clear();
    for (let waiter; (waiter = this.#waiters.shift()) !== undefined;) waiter.leaseRefused(reason);
    const fences = this.#held.close();
    const work: Promise<unknown>[] = [];
    if (fences.length > 0) work.push(this.#store.release(this.holder, fences));
    // An acquire still in flight may leave a wait record that #record does
    // not know of yet, and notices may have lowered its want below the
    // store's record: a release elsewhere would hand it leases nobody returns.
    if (this.#record.want > 0 || this.#record.recorded || this.#acquiring) {
      work.push(withdrawWait(this.#store, this.holder, this.#clock, fences));
    }
    const closing = this.#notices.close();
    if (closing !== undefined) work.push(closing);
    await settleWithin(this.#clock, work, DISPOSE_LIMIT_MS);
    this.#watched?.close();
  }

  /**
   * Asks the store for what the waiting forks need. `newDemandOnly` (a fork
   * was queued): skip the round trip when the store already knows this
   * demand and a retry is scheduled, so forks cycling through local hand-offs
   * cost the store nothing.
   */
  async #pump(newDemandOnly = false): Promise<void> {
    if (this.#disposed) return;
    for (let entry; this.#waiters.size > 0 && (entry = this.#held.takeIdle()) !== undefined;) {
      this.#waiters.shift()!.leaseGranted(entry);
    }
    if (this.#acquiring) {
      if (newDemandOnly) this.#newDemand = true;
      else this.#acquireAgain = true;
      return;
    }
    const wanted = () => Math.max(0, Math.min(this.#waiters.size, this.#maxHeld - this.#held.size));
    if (wanted() === 0 && this.#record.want === 0) return;
    if (newDemandOnly && wanted() <= this.#record.want && this.#wake.armed) return;
    this.#acquiring = true;
    this.#wake.cancel();
    try {
      await this.#notices.ready();
      // A release in flight goes first (in the store this script would delay its notice).
      await this.#held.releasing?.catch(() => {});
      if (this.#disposed) return;
      // This call asks for everything known by now, the capacity that release
      // freed included: only what happens after it is sent calls for another.
      this.#acquireAgain = this.#newDemand = false;
      const want = wanted();
      const sentAt = this.#clock.now();
      this.#record.sent(sentAt);
      // The send time tags the wait record: a lease handed over later counts its local deadline from it.
      const result = want > 0
        ? await this.#store.acquire(this.holder, want, sentAt)
        : { ...await this.#store.wait(this.holder, 0, sentAt), granted: [] as number[] };
      if (this.#disposed) {
        const fences = [...result.granted, ...result.handed ?? []];
        this.#store.release(this.holder, fences).catch(() => {});
        if (want > result.granted.length) {
          withdrawWait(this.#store, this.holder, this.#clock, fences).catch(() => {});
        }
        return;
      }
      this.#health.recovered();
      this.#held.heard(result);
      this.#record.replied(want, result.granted.length);
      for (const fence of result.granted) this.#grant(this.#held.add(fence, sentAt));
      this.#held.unheard(result.handed);
      if (result.granted.length > 0) this.#poll.reset();
      // Next try: a notice, the earliest deadline, or the polling fallback, whichever first.
      if (this.#record.want > 0) this.#wakeIn(this.#poll.next(result.earliestMs));
    } catch (error) {
      if (this.#disposed) return;
      if (error instanceof CapacityMismatchError) {
        this.#record.refused();
        for (let waiter; (waiter = this.#waiters.shift()) !== undefined;) {
          waiter.leaseRefused(error);
        }
      } else {
        this.#health.failed("acquire", error);
        this.#wakeIn(this.#poll.next(-1));
      }
    } finally {
      this.#acquiring = false;
      this.#record.settled();
    }
    const again = this.#acquireAgain, newDemand = this.#newDemand;
    this.#acquireAgain = this.#newDemand = false;
    if (again || newDemand) this.#pump(!again);
  }

  #wakeIn({ ms, slackMs }: PollDelay): void {
    this.#wake.set(ms, slackMs);
  }

  /** A new lease, to the first waiting fork; withdrawn meanwhile: to the fleet, or idle for a moment. */
  #grant(entry: LeaseEntry): boolean {
    entry.busy = true;
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) waiter.leaseGranted(entry);
    else this.release(entry);
    return waiter !== undefined;
  }

  /** Another runtime's release handed `fences` over, for the wait record the call tagged `tag` wrote. */
  #handedOver(fences: readonly number[], tag: number): void {
    for (const fence of fences) {
      if (this.#held.heardOf(fence)) continue; // a duplicate, or given back as unheard-of
      this.#record.handed(tag);
      const entry = this.#held.adopt(fence, tag);
      if (entry === undefined) continue; // its deadline has passed: already going back
      if (this.#held.size <= this.#maxHeld && this.#grant(entry)) continue;
      if (this.#held.size > this.#maxHeld) this.#held.giveBack(entry); // an acquire crossed it
      // Nobody here wanted it: the store's wait record is stale (an acquire
      // crossed a hand-over); clear it, or every release lands here.
      this.#record.stale();
    }
    if (this.#waiters.size > 0 ? this.#record.want === 0 : this.#record.want > 0) this.#pump();
  }

  #heard(notice: Notice): void {
    if (this.#disposed) return;
    if (notice.kind === "wanted") {
      if (notice.holder !== this.holder) this.#held.othersWant(notice.share, notice.seq);
    } else if (notice.kind === "granted") {
      if (notice.holder !== this.holder) return;
      // Holding nothing until now, this runtime heard no "wanted" notice.
      if (notice.view !== undefined) this.#held.heard(notice.view);
      this.#handedOver(notice.fences, notice.tag);
    } else if (this.#waiters.size > 0) {
      this.#poll.reset();
      this.#pump();
    }
  }
}
