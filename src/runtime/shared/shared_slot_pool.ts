// The slot pool of a runtime with a shared capacity (API.md S1–S6): a process
// starts only with a local slot *and* a lease. A fork takes its local slot
// first (the local pool's order and start rate decide who), then waits for a
// lease from the lease manager while holding that slot. A runtime without a
// shared capacity never builds this, so its pool stays synchronous.
//
// The lease of a grant travels beside it, not through it: every grant is
// followed, in the same synchronous step, by the process's admission, which
// claims the lease with `claimLease` (see Scope.admitProcess). Keeping it out
// of SlotPool's signatures leaves the local path untouched.
import type { SharedCapacityStats } from "../options.ts";
import { type SlotPool, SlotWaiter } from "../slot_pool.ts";
import type { Lease, LeaseManager } from "./lease_manager.ts";

/** One fork of this pool: first in the local pool's line, then in the manager's. */
class SharedWait extends SlotWaiter {
  /** True once the local slot is held and the fork waits for a lease. */
  forLease = false;

  constructor(readonly inner: SlotWaiter, readonly pool: SharedSlotPool) {
    super(inner.owner);
  }

  get priority(): number {
    return this.inner.priority;
  }

  /** The local slot is held: now the lease. */
  slotGranted(): void {
    this.pool.localGranted(this);
  }

  waitFailed(reason: unknown): void {
    this.pool.forget(this);
    this.inner.waitFailed(reason);
  }

  /** Called by the lease manager (this object sits in its queue too, one queue at a time). */
  leaseGranted(lease: Lease): void {
    this.pool.grant(this, lease);
  }

  leaseRefused(error: unknown): void {
    this.pool.refused(this, error);
  }
}

export class SharedSlotPool implements SlotPool {
  readonly #waits = new Map<SlotWaiter, SharedWait>();
  /** Forks holding a local slot while they wait for a lease. */
  #waitingForLease = 0;
  /** The lease of the grant being admitted right now. */
  #granting: Lease | undefined = undefined;

  constructor(
    readonly local: SlotPool,
    readonly manager: LeaseManager,
    readonly key: string,
    readonly limit: number,
  ) {}

  get max(): number {
    return this.local.max;
  }

  /** Processes running: local slots held, less those still waiting for a lease. */
  get active(): number {
    return this.local.active - this.#waitingForLease;
  }

  get waiting(): number {
    return this.local.waiting + this.#waitingForLease;
  }

  get waitingForRate(): number | undefined {
    return this.local.waitingForRate;
  }

  get stats(): SharedCapacityStats {
    return { key: this.key, limit: this.limit, held: this.manager.held };
  }

  /** S5: only with a local slot and a lease this runtime holds idle, now; never the store. */
  tryAcquire(): boolean {
    if (this.manager.idle === 0 || !this.local.tryAcquire()) return false;
    this.#granting = this.manager.tryTake();
    return true;
  }

  /**
   * The lease of the slot just granted, for the process being admitted. The
   * admission gives it back with `releaseLease` if it fails.
   */
  claimLease(): Lease | undefined {
    const lease = this.#granting;
    this.#granting = undefined;
    return lease;
  }

  enqueue(waiter: SlotWaiter): void {
    const wait = new SharedWait(waiter, this);
    // A free local slot is taken at once (the local pool's fifo keeps every
    // slot held while anyone waits, so no one is overtaken): only the lease
    // is missing. The manager answers later, never inside this call.
    if (this.local.tryAcquire()) {
      this.#waits.set(waiter, wait);
      this.#waitForLease(wait);
      return;
    }
    this.local.enqueue(wait);
    this.#waits.set(waiter, wait);
  }

  withdraw(waiter: SlotWaiter): boolean {
    const wait = this.#waits.get(waiter);
    if (wait === undefined) return false;
    if (wait.forLease) {
      if (!this.manager.withdraw(wait)) return false;
      this.#leaveLeaseLine(wait);
      this.local.release();
      return true;
    }
    if (!this.local.withdraw(wait)) return false;
    this.#waits.delete(waiter);
    return true;
  }

  withdrawOwnedBy(owner: object): SlotWaiter[] {
    // The local line first, so that the slots freed below go to other owners.
    const withdrawn = this.local.withdrawOwnedBy(owner).map((wait) => {
      const inner = (wait as SharedWait).inner;
      this.#waits.delete(inner);
      return inner;
    });
    const leaseWaits = [...this.#waits.values()].filter((wait) =>
      wait.forLease && wait.owner === owner && this.manager.withdraw(wait)
    );
    for (const wait of leaseWaits) {
      this.#leaveLeaseLine(wait);
      withdrawn.push(wait.inner);
    }
    for (let i = 0; i < leaseWaits.length; i++) this.local.release();
    return withdrawn;
  }

  /** A process without a lease gave its slot back (its admission failed). */
  release(): void {
    this.local.release();
  }

  /**
   * A process stopped: its local slot goes back (to the next local waiter,
   * who then asks for a lease), then its lease (which the manager may hand to
   * that waiter, keep idle for a moment, or return to the store).
   */
  releaseLease(lease: Lease): void {
    this.manager.release(lease);
  }

  localGranted(wait: SharedWait): void {
    const lease = this.manager.tryTake();
    if (lease !== undefined) return this.grant(wait, lease);
    this.#waitForLease(wait);
  }

  grant(wait: SharedWait, lease: Lease): void {
    if (wait.forLease) this.#leaveLeaseLine(wait);
    else this.#waits.delete(wait.inner);
    this.#granting = lease;
    wait.inner.slotGranted();
    // Normally claimed by the admission inside slotGranted; a waiter that
    // admitted nothing must not keep it.
    const unclaimed = this.claimLease();
    if (unclaimed !== undefined) this.manager.release(unclaimed);
  }

  /** No lease can come (CapacityMismatchError, disposal): the fork fails, its slot goes back. */
  refused(wait: SharedWait, error: unknown): void {
    this.#leaveLeaseLine(wait);
    // One microtask later: a release here could hand the slot to a waiter
    // that is refused at once in turn, recursing through the whole line.
    queueMicrotask(() => this.local.release());
    wait.inner.waitFailed(error);
  }

  forget(wait: SharedWait): void {
    this.#waits.delete(wait.inner);
  }

  /** Stops the lease manager: waiters refused, leases back to the store, connections closed. */
  dispose(reason: unknown): Promise<void> {
    return this.manager.dispose(reason);
  }

  #waitForLease(wait: SharedWait): void {
    wait.forLease = true;
    this.#waitingForLease++;
    this.manager.enqueue(wait);
  }

  #leaveLeaseLine(wait: SharedWait): void {
    wait.forLease = false;
    this.#waitingForLease--;
    this.#waits.delete(wait.inner);
  }
}
