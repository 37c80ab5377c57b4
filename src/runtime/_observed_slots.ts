// A SlotPool that reports the wait and the counts to the runtime's hooks. It
// does no accounting of its own: every call goes to the real pool, and it is
// put in front of that pool only when an instrument listens, so that an
// uninstrumented runtime pays nothing on the slot path.
import type { Clock } from "./clock.ts";
import type { PoolHooks } from "./_hooks.ts";
import { type SlotPool, SlotWaiter } from "./slot_pool.ts";

/** Stands in the real pool's queue for one waiter, to see its grant. */
class ObservedWaiter extends SlotWaiter {
  constructor(
    readonly inner: SlotWaiter,
    readonly pool: ObservedSlotPool,
    readonly since: number,
  ) {
    super(inner.owner);
  }

  get priority(): number {
    return this.inner.priority;
  }

  slotGranted(): void {
    this.pool.granted(this);
  }

  waitFailed(reason: unknown): void {
    this.pool.failed(this, reason);
  }
}

export class ObservedSlotPool implements SlotPool {
  readonly #wrappers = new Map<SlotWaiter, ObservedWaiter>();

  constructor(
    readonly inner: SlotPool,
    readonly hooks: PoolHooks,
    readonly clock: Clock,
  ) {}

  get max(): number {
    return this.inner.max;
  }

  get active(): number {
    return this.inner.active;
  }

  get waiting(): number {
    return this.inner.waiting;
  }

  get waitingForRate(): number | undefined {
    return this.inner.waitingForRate;
  }

  tryAcquire(): boolean {
    if (!this.inner.tryAcquire()) return false;
    this.#changed();
    return true;
  }

  enqueue(waiter: SlotWaiter): void {
    const wrapper = new ObservedWaiter(waiter, this, this.clock.now());
    this.#wrappers.set(waiter, wrapper);
    this.hooks.waitBegan(waiter);
    try {
      this.inner.enqueue(wrapper);
    } catch (error) {
      // The real pool refused it (a sleep on a broken clock): it never waited.
      this.#left(wrapper, false);
      throw error;
    }
    this.#changed();
  }

  withdraw(waiter: SlotWaiter): boolean {
    const wrapper = this.#wrappers.get(waiter);
    if (wrapper === undefined || !this.inner.withdraw(wrapper)) return false;
    this.#left(wrapper, false);
    this.#changed();
    return true;
  }

  withdrawOwnedBy(owner: object): SlotWaiter[] {
    const withdrawn = this.inner.withdrawOwnedBy(owner).map((wrapper) => {
      this.#left(wrapper as ObservedWaiter, false);
      return (wrapper as ObservedWaiter).inner;
    });
    if (withdrawn.length > 0) this.#changed();
    return withdrawn;
  }

  release(): void {
    this.inner.release();
    this.#changed();
  }

  granted(wrapper: ObservedWaiter): void {
    this.#left(wrapper, true);
    // The counts first: the grant's process starts inside slotGranted.
    this.#changed();
    wrapper.inner.slotGranted();
  }

  failed(wrapper: ObservedWaiter, reason: unknown): void {
    this.#left(wrapper, false);
    this.#changed();
    wrapper.inner.waitFailed(reason);
  }

  #left(wrapper: ObservedWaiter, granted: boolean): void {
    this.#wrappers.delete(wrapper.inner);
    this.hooks.waitEnded(wrapper.inner, granted, this.clock.now() - wrapper.since);
  }

  #changed(): void {
    this.hooks.slotsChanged(this.inner.active, this.inner.waiting);
  }
}
