// The slot pool of a runtime with a shared capacity (API.md S1–S6): a process
// starts only with a local slot *and* a lease. A fork takes its local slot
// first (the local pool's order decides who), then waits for a lease from the
// lease manager while holding that slot, then, under a start rate, for room
// in the rate's window (last, so that a lease wait cannot bunch starts past
// the rate). A runtime without a shared capacity never builds this, so its
// pool stays synchronous.
//
// The lease of a grant travels beside it, not through it: every grant is
// followed, in the same synchronous step, by the process's admission, which
// claims the lease with `claimLease` (see app/_lease_admission.ts). Keeping
// it out of SlotPool's signatures leaves the local path untouched.
import type { QueueNode } from "../../_linked_queue.ts";
import type { Clock } from "../clock.ts";
import type { RuntimeLogger, SharedCapacityStats } from "../options.ts";
import type { RandomStream } from "../random.ts";
import type { RateOptions } from "../_rate_window.ts";
import { logSafely } from "../_safe_log.ts";
import { createSlotPool, type SlotPool, SlotWaiter } from "../slot_pool.ts";
import { fifo, type WaitPolicy } from "../wait_policy.ts";
import { type Lease, type LeaseLogger, LeaseManager } from "./lease_manager.ts";
import { thirdOfLeaseMs } from "./_lease_contracts.ts";
import type { SharedCapacity, SharedCapacityBackend } from "./shared_capacity.ts";

type Stage = "local" | "lease" | "rate";

/**
 * One fork of this pool, in one line at a time: the local pool's, the lease
 * manager's (it has the manager's LeaseWaiter shape), then the rate's.
 */
class SharedWait extends SlotWaiter {
  // The manager's LeaseWaiter links (a slot waiter is a RingEntry, not a QueueNode).
  /** @internal */ _prev: QueueNode | undefined = undefined;
  /** @internal */ _next: QueueNode | undefined = undefined;
  stage: Stage = "local";
  lease: Lease | undefined = undefined;

  constructor(readonly inner: SlotWaiter, readonly pool: SharedSlotPool) {
    super(inner.owner);
  }

  get priority(): number {
    return this.inner.priority;
  }

  /** The local pool (a local slot), or the rate stage (room in the window), let it go on. */
  slotGranted(): void {
    if (this.stage === "local") this.pool.localGranted(this);
    else this.pool.grant(this);
  }

  waitFailed(reason: unknown): void {
    this.pool.failed(this, reason);
  }

  leaseGranted(lease: Lease): void {
    this.pool.leaseGranted(this, lease);
  }

  leaseRefused(error: unknown): void {
    this.pool.failed(this, error);
  }
}

export class SharedSlotPool implements SlotPool {
  readonly #waits = new Map<SlotWaiter, SharedWait>();
  /** Forks holding a local slot while they wait for a lease or for the rate. */
  #holdingSlot = 0;
  /** The lease of the grant being admitted right now. */
  #granting: Lease | undefined = undefined;

  constructor(
    /** The runtime's local pool, without a start rate. */
    readonly local: SlotPool,
    readonly manager: LeaseManager,
    readonly key: string,
    readonly limit: number,
    /** The start rate as a last stage (its own `max` never binds); undefined without a rate. */
    readonly rate: SlotPool | undefined,
  ) {}

  get max(): number {
    return this.local.max;
  }

  /** Processes running: local slots held, less the forks still waiting for a lease or the rate. */
  get active(): number {
    return this.local.active - this.#holdingSlot;
  }

  get waiting(): number {
    return this.local.waiting + this.#holdingSlot;
  }

  get waitingForRate(): number | undefined {
    return this.rate?.waiting;
  }

  get stats(): SharedCapacityStats {
    return { key: this.key, limit: this.limit, held: this.manager.held };
  }

  /** S5: only with a local slot, a lease held idle and room in the rate, now; never the store. */
  tryAcquire(): boolean {
    if (this.manager.idle === 0 || !this.local.tryAcquire()) return false;
    if (this.rate !== undefined && !this.rate.tryAcquire()) {
      this.local.release(); // nobody waits locally (a slot was free): nothing is handed on
      return false;
    }
    this.#granting = this.manager.tryTake();
    return true;
  }

  /** The lease of the slot just granted, for the process being admitted. */
  claimLease(): Lease | undefined {
    const lease = this.#granting;
    this.#granting = undefined;
    return lease;
  }

  enqueue(waiter: SlotWaiter): void {
    const wait = new SharedWait(waiter, this);
    this.#waits.set(waiter, wait);
    // A free local slot is taken at once (a fifo local pool keeps every slot
    // held while anyone waits, so no one is overtaken): only the lease is
    // missing. The manager answers later, never inside this call.
    if (this.local.tryAcquire()) this.#waitForLease(wait);
    else this.local.enqueue(wait);
  }

  withdraw(waiter: SlotWaiter): boolean {
    const wait = this.#waits.get(waiter);
    if (wait === undefined || !this.#withdrawFromStage(wait)) return false;
    this.#leave(wait);
    this.#giveBack(wait);
    return true;
  }

  withdrawOwnedBy(owner: object): SlotWaiter[] {
    // The local line first, so that the slots freed below go to other owners.
    const withdrawn = this.local.withdrawOwnedBy(owner).map((wait) => {
      this.#waits.delete((wait as SharedWait).inner);
      return (wait as SharedWait).inner;
    });
    const holding = [...this.#waits.values()].filter((wait) =>
      wait.owner === owner && this.#withdrawFromStage(wait)
    );
    for (const wait of holding) this.#leave(wait);
    for (const wait of holding) {
      withdrawn.push(wait.inner);
      this.#giveBack(wait);
    }
    return withdrawn;
  }

  /**
   * A slot goes back: a process stopped (its lease goes back separately, with
   * `releaseLease`), or an admission failed.
   */
  release(): void {
    this.local.release();
    this.rate?.release();
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
    if (lease === undefined) return this.#waitForLease(wait);
    this.#holdSlot(wait);
    this.leaseGranted(wait, lease);
  }

  leaseGranted(wait: SharedWait, lease: Lease): void {
    wait.lease = lease;
    const rate = this.rate;
    if (rate === undefined || rate.tryAcquire()) return this.grant(wait);
    wait.stage = "rate";
    try {
      rate.enqueue(wait);
    } catch (error) {
      this.failed(wait, error); // the clock could not sleep for the window
    }
  }

  /** Everything is held: the fork's process starts. */
  grant(wait: SharedWait): void {
    this.#leave(wait);
    this.#granting = wait.lease;
    wait.inner.slotGranted();
    // Normally claimed by the admission inside slotGranted; a waiter that
    // admitted nothing must not keep it.
    const unclaimed = this.claimLease();
    if (unclaimed !== undefined) this.manager.release(unclaimed);
  }

  /**
   * No lease can come (CapacityMismatchError, disposal) or a wait's clock
   * failed: the fork fails, and what it held goes back.
   */
  failed(wait: SharedWait, error: unknown): void {
    const stage = wait.stage;
    this.#leave(wait);
    if (stage !== "local") {
      if (wait.lease !== undefined) this.manager.release(wait.lease);
      // One microtask later: a release here could hand the slot to a waiter
      // that fails at once in turn, recursing through the whole line.
      queueMicrotask(() => this.local.release());
    }
    wait.inner.waitFailed(error);
  }

  /** Stops the lease manager: waiters refused, leases back to the store, connections closed. */
  dispose(reason: unknown): Promise<void> {
    return this.manager.dispose(reason);
  }

  #waitForLease(wait: SharedWait): void {
    this.#holdSlot(wait);
    this.manager.enqueue(wait);
  }

  /** The fork holds its local slot now: counted as waiting, not active, until it starts. */
  #holdSlot(wait: SharedWait): void {
    wait.stage = "lease";
    this.#holdingSlot++;
  }

  #withdrawFromStage(wait: SharedWait): boolean {
    if (wait.stage === "local") return this.local.withdraw(wait);
    if (wait.stage === "lease") return this.manager.withdraw(wait);
    return this.rate!.withdraw(wait);
  }

  /** The fork is out of every line. */
  #leave(wait: SharedWait): void {
    if (wait.stage !== "local") this.#holdingSlot--;
    this.#waits.delete(wait.inner);
  }

  /** A withdrawn fork's lease and slot go back. */
  #giveBack(wait: SharedWait): void {
    if (wait.lease !== undefined) this.manager.release(wait.lease);
    if (wait.stage !== "local") this.local.release();
  }
}

/** What the runtime's own pool would have been built from. */
export interface LocalPoolOptions {
  readonly maxProcesses: number;
  readonly wait: WaitPolicy;
  readonly clock: Clock;
  readonly random: RandomStream;
  readonly rate: RateOptions | undefined;
  readonly logger: RuntimeLogger;
}

/** The pool of a runtime with a shared capacity: local slots, leases, then the rate. */
export function createSharedSlotPool(
  capacity: SharedCapacity,
  backend: SharedCapacityBackend,
  options: LocalPoolOptions,
): SharedSlotPool {
  const { maxProcesses, wait, clock, random, rate, logger } = options;
  const local = createSlotPool(maxProcesses, wait, clock, random);
  // Served in order; its max never binds (the local pool bounds first).
  const rateStage = rate === undefined
    ? undefined
    : createSlotPool(maxProcesses, fifo(), clock, random, rate);
  const leaseLogger: LeaseLogger = {
    warn: (message, properties) => logSafely(logger, "warn", message, properties ?? {}),
    info: (message, properties) => logSafely(logger, "info", message, properties ?? {}),
  };
  const store = backend.openStore();
  // Leases live on real time whatever the runtime's clock: the store's
  // deadlines pass in real time too.
  const manager = new LeaseManager(store, {
    maxHeld: maxProcesses,
    logger: leaseLogger,
    stopMarginMs: stopMarginFor(store.leaseMs),
    slowCallMs: thirdOfLeaseMs(store.leaseMs),
  });
  return new SharedSlotPool(local, manager, capacity.key, capacity.limit, rateStage);
}

/**
 * How much earlier than the store's deadline a runtime cancels the processes
 * of a lease it could not renew: a tenth of the lease, at most a second. The
 * local deadline alone comes only a network latency before the store's, too
 * little for a process to stop before another runtime takes its lease.
 */
export function stopMarginFor(leaseMs: number): number {
  return Math.min(1_000, Math.floor(leaseMs / 10));
}
