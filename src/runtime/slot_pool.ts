// All slot accounting lives here, behind `SlotPool`: acquire, release, waiting
// and hand-off. AppL sees only this interface, so a store shared between
// processes or machines (Deno KV, Redis) can implement it later without
// touching AppL or LangL.
import { LinkedQueue, QueueNode } from "../_linked_queue.ts";
import type { Clock } from "./clock.ts";
import type { RandomStream } from "./random.ts";
import type { BackoffPolicy, WaitPolicy } from "./wait_policy.ts";

/** Backoff's retry state for one waiter. */
interface Retry {
  attempt: number;
  readonly controller: AbortController;
}

/**
 * Somebody waiting for a slot. The waiter object itself is the queue entry
 * (no separate ticket), which keeps a queued fork small.
 */
export abstract class SlotWaiter extends QueueNode {
  constructor(
    /** Lets a scope withdraw all of its waiters at once. */
    readonly owner: object | undefined,
  ) {
    super();
  }

  /** Runs once, with the slot already held by this waiter. */
  abstract slotGranted(): void;
}

export interface SlotPool {
  readonly max: number;
  /** Slots held right now. Never above `max`. */
  readonly active: number;
  /** Waiters waiting for a slot. */
  readonly waiting: number;
  /** Takes a slot if one is free now. */
  tryAcquire(): boolean;
  /** Queues for a slot; `waiter.slotGranted()` runs later with the slot already held. */
  enqueue(waiter: SlotWaiter): void;
  /** Leaves the wait. False if the waiter was already granted (then: a no-op). */
  withdraw(waiter: SlotWaiter): boolean;
  /** Withdraws every waiter of `owner`; returns them. */
  withdrawOwnedBy(owner: object): SlotWaiter[];
  /** Gives a held slot back (to the next waiter, under fifo). */
  release(): void;
}

/** The local count of held slots, which both policies share. */
abstract class LocalSlots {
  active = 0;

  constructor(readonly max: number) {}

  tryAcquire(): boolean {
    if (this.active < this.max) {
      this.active++;
      return true;
    }
    return false;
  }
}

/** Hand-off on release: a freed slot goes straight to the longest waiter. */
class FifoSlotPool extends LocalSlots implements SlotPool {
  // While anyone waits, all slots are held (release hands off), so
  // tryAcquire never lets a newcomer jump the queue.
  readonly #queue = new LinkedQueue<SlotWaiter>();

  get waiting(): number {
    return this.#queue.size;
  }

  enqueue(waiter: SlotWaiter): void {
    this.#queue.push(waiter);
  }

  withdraw(waiter: SlotWaiter): boolean {
    return this.#queue.remove(waiter);
  }

  withdrawOwnedBy(owner: object): SlotWaiter[] {
    return this.#queue.removeWhere((waiter) => waiter.owner === owner);
  }

  release(): void {
    const next = this.#queue.shift();
    if (next === undefined) this.active--;
    else next.slotGranted();
  }
}

/** The book's loop: retry with growing, capped, jittered sleeps on the clock. */
class BackoffSlotPool extends LocalSlots implements SlotPool {
  /** Each waiter's retry state; kept here so that fifo waiters do not carry it. */
  readonly #waiting = new Map<SlotWaiter, Retry>();

  constructor(
    max: number,
    readonly policy: BackoffPolicy,
    readonly clock: Clock,
    readonly random: RandomStream,
  ) {
    super(max);
  }

  get waiting(): number {
    return this.#waiting.size;
  }

  enqueue(waiter: SlotWaiter): void {
    const retry = { attempt: 0, controller: new AbortController() };
    this.#waiting.set(waiter, retry);
    this.#sleep(waiter, retry);
  }

  /** The sleep before retry number `attempt + 1`, in ms. */
  delayFor(attempt: number): number {
    const { initialMs, factor, maxMs, jitter } = this.policy;
    const base = Math.min(maxMs, initialMs * factor ** attempt);
    return base * (1 + jitter * (2 * this.random.next() - 1));
  }

  #sleep(waiter: SlotWaiter, retry: Retry): void {
    const ms = this.delayFor(retry.attempt++);
    this.clock.sleep(ms, retry.controller.signal).then(() => {
      if (this.#waiting.get(waiter) !== retry) return;
      if (this.tryAcquire()) {
        this.#leave(waiter);
        waiter.slotGranted();
      } else {
        this.#sleep(waiter, retry);
      }
    }, () => {/* withdrawn: the sleep was aborted on purpose */});
  }

  withdraw(waiter: SlotWaiter): boolean {
    const retry = this.#waiting.get(waiter);
    if (retry === undefined) return false;
    retry.controller.abort();
    this.#leave(waiter);
    return true;
  }

  withdrawOwnedBy(owner: object): SlotWaiter[] {
    const withdrawn = [...this.#waiting.keys()].filter((waiter) => waiter.owner === owner);
    for (const waiter of withdrawn) this.withdraw(waiter);
    return withdrawn;
  }

  #leave(waiter: SlotWaiter): void {
    this.#waiting.delete(waiter);
  }

  release(): void {
    this.active--;
  }
}

export function createSlotPool(
  max: number,
  policy: WaitPolicy,
  clock: Clock,
  random: RandomStream,
): SlotPool {
  return policy.kind === "backoff"
    ? new BackoffSlotPool(max, policy as BackoffPolicy, clock, random)
    : new FifoSlotPool(max);
}
