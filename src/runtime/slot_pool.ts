// All slot accounting lives here, behind `SlotPool`: acquire, release, waiting
// and hand-off. AppL sees only this interface, so a store shared between
// processes or machines (Deno KV, Redis) can implement it later without
// touching AppL or LangL. The files it owns: _wait_line.ts (fifo's line, with
// priorities), _ring_line.ts (the queue under it), _rate_window.ts (the start
// rate) and _rated_fifo.ts (fifo under a start rate).
import { RingEntry } from "./_ring_line.ts";
import { type Clock, sleepOn } from "./clock.ts";
import type { RandomStream } from "./random.ts";
import { type RateOptions, SlidingWindow, type StartRate } from "./_rate_window.ts";
import { RatedFifoSlotPool } from "./_rated_fifo.ts";
import { WaitLine } from "./_wait_line.ts";
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
export abstract class SlotWaiter extends RingEntry {
  constructor(
    /** Lets a scope withdraw all of its waiters at once. */
    readonly owner: object | undefined,
  ) {
    super();
  }

  /**
   * Higher goes first under fifo (`ForkOptions.priority`); fixed while the
   * waiter waits. Best a getter over the fork's options (no field per
   * waiter). Abstract so that a waiter standing in for another (a wrapper)
   * cannot silently drop the priority.
   */
  abstract readonly priority: number;

  /** Runs once, with the slot already held by this waiter. */
  abstract slotGranted(): void;

  /**
   * Runs at most once, instead of `slotGranted`, when the pool cannot go on
   * waiting for this waiter (a retry sleep on the runtime's clock failed);
   * the pool has already let go of it.
   */
  abstract waitFailed(reason: unknown): void;
}

export interface SlotPool {
  readonly max: number;
  /** Slots held right now. Never above `max`. */
  readonly active: number;
  /** Waiters waiting for a slot. */
  readonly waiting: number;
  /** Of `waiting`, those a slot is free for, held back by the start rate; undefined without one. */
  readonly waitingForRate: number | undefined;
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
  readonly #queue = new WaitLine<SlotWaiter>();
  readonly waitingForRate = undefined;

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
    // `active` is read and written on every release, the slot handed on or
    // not: a path that first runs once the line has run dry (the end of a
    // burst, long after V8 optimised this) would deoptimise this function and
    // the stop bookkeeping it is inlined into, for the next burst's hand-offs.
    this.active -= next === undefined ? 1 : 0;
    next?.slotGranted();
  }
}

/**
 * The book's loop: retry with growing, capped, jittered sleeps on the clock.
 * Waiters are not ordered, so priorities do not apply. A start rate is one
 * more condition of every try; a retry that finds only the rate missing
 * sleeps at least until the window has room, so no retry is wasted on it.
 */
class BackoffSlotPool extends LocalSlots implements SlotPool {
  /** Each waiter's retry state; kept here so that fifo waiters do not carry it. */
  readonly #waiting = new Map<SlotWaiter, Retry>();

  constructor(
    max: number,
    readonly policy: BackoffPolicy,
    readonly clock: Clock,
    readonly random: RandomStream,
    readonly rate: StartRate | undefined,
  ) {
    super(max);
  }

  get waiting(): number {
    return this.#waiting.size;
  }

  get waitingForRate(): number | undefined {
    const rate = this.rate;
    if (rate === undefined) return undefined;
    const now = this.clock.now();
    return rate.nextFree(now) > now ? Math.min(this.#waiting.size, this.max - this.active) : 0;
  }

  override tryAcquire(): boolean {
    if (this.active >= this.max) return false;
    if (this.rate !== undefined && !this.rate.tryTake(this.clock.now())) return false;
    this.active++;
    return true;
  }

  enqueue(waiter: SlotWaiter): void {
    const retry = { attempt: 0, controller: new AbortController() };
    // Counted in `waiting` only once its first sleep is on the clock: a sleep
    // that throws leaves nothing behind, and the fork rejects with the error.
    this.#sleep(waiter, retry);
    this.#waiting.set(waiter, retry);
  }

  /** The sleep before retry number `attempt + 1`, in ms. */
  delayFor(attempt: number): number {
    const { initialMs, factor, maxMs, jitter } = this.policy;
    // factor^k overflows to Infinity after enough retries: the cap takes over
    // (and a NaN could only ever become the cap, never a sleep).
    const grown = initialMs * factor ** attempt;
    const base = grown < maxMs ? grown : maxMs;
    return base * (1 + jitter * (2 * this.random.next() - 1));
  }

  /** Puts the waiter's next sleep on the clock; throws if the clock fails to sleep. */
  #sleep(waiter: SlotWaiter, retry: Retry): void {
    let ms = this.delayFor(retry.attempt++);
    if (this.rate !== undefined && this.active < this.max) {
      const now = this.clock.now();
      ms = Math.max(ms, this.rate.nextFree(now) - now);
    }
    sleepOn(this.clock, ms, retry.controller.signal, "backoff sleep ms").then(() => {
      if (this.#waiting.get(waiter) !== retry) return;
      if (this.tryAcquire()) {
        this.#leave(waiter);
        waiter.slotGranted();
        return;
      }
      try {
        this.#sleep(waiter, retry);
      } catch (error) {
        this.#leave(waiter);
        waiter.waitFailed(error);
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
  rateOptions?: RateOptions,
): SlotPool {
  const rate = rateOptions === undefined
    ? undefined
    : new SlidingWindow(rateOptions.limit, rateOptions.intervalMs);
  if (policy.kind === "backoff") {
    return new BackoffSlotPool(max, policy as BackoffPolicy, clock, random, rate);
  }
  return rate === undefined ? new FifoSlotPool(max) : new RatedFifoSlotPool(max, rate, clock);
}
