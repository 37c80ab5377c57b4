// All slot accounting lives here, behind `SlotPool`: acquire, release, waiting
// and hand-off. AppL sees only this interface, so a store shared between
// processes or machines (Deno KV, Redis) can implement it later without
// touching AppL or LangL.
import { LinkedQueue, QueueNode } from "../_linked_queue.ts";
import type { Clock } from "./clock.ts";
import type { RandomStream } from "./random.ts";
import type { BackoffPolicy, WaitPolicy } from "./wait_policy.ts";

/** A place in the wait for a slot. `grant` runs once, with the slot held. */
export interface SlotTicket {
  readonly grant: () => void;
}

export interface SlotPool {
  readonly max: number;
  /** Slots held right now. Never above `max`. */
  readonly active: number;
  /** Tickets waiting for a slot. */
  readonly waiting: number;
  /** Takes a slot if one is free now. */
  tryAcquire(): boolean;
  /** Queues for a slot; `grant` is called later with the slot already held. */
  enqueue(grant: () => void): SlotTicket;
  /** Leaves the wait. False if the ticket was already granted (then: a no-op). */
  withdraw(ticket: SlotTicket): boolean;
  /** Gives a held slot back (to the next waiter, under fifo). */
  release(): void;
}

class FifoTicket extends QueueNode implements SlotTicket {
  constructor(readonly grant: () => void) {
    super();
  }
}

/** Hand-off on release: a freed slot goes straight to the longest waiter. */
class FifoSlotPool implements SlotPool {
  active = 0;
  readonly #queue = new LinkedQueue<FifoTicket>();

  constructor(readonly max: number) {}

  get waiting(): number {
    return this.#queue.size;
  }

  tryAcquire(): boolean {
    // While anyone waits all slots are held (release hands off), so a free
    // slot here never jumps the queue.
    if (this.active < this.max) {
      this.active++;
      return true;
    }
    return false;
  }

  enqueue(grant: () => void): SlotTicket {
    const ticket = new FifoTicket(grant);
    this.#queue.push(ticket);
    return ticket;
  }

  withdraw(ticket: SlotTicket): boolean {
    return this.#queue.remove(ticket as FifoTicket);
  }

  release(): void {
    const next = this.#queue.shift();
    if (next === undefined) this.active--;
    else next.grant();
  }
}

class BackoffTicket implements SlotTicket {
  attempt = 0;
  readonly controller = new AbortController();
  constructor(readonly grant: () => void) {}
}

/** The book's loop: retry with growing, capped, jittered sleeps on the clock. */
class BackoffSlotPool implements SlotPool {
  active = 0;
  readonly #waiting = new Set<BackoffTicket>();

  constructor(
    readonly max: number,
    readonly policy: BackoffPolicy,
    readonly clock: Clock,
    readonly random: RandomStream,
  ) {}

  get waiting(): number {
    return this.#waiting.size;
  }

  tryAcquire(): boolean {
    if (this.active < this.max) {
      this.active++;
      return true;
    }
    return false;
  }

  enqueue(grant: () => void): SlotTicket {
    const ticket = new BackoffTicket(grant);
    this.#waiting.add(ticket);
    this.#sleep(ticket);
    return ticket;
  }

  /** The sleep before retry number `attempt + 1`, in ms. */
  delayFor(attempt: number): number {
    const { initialMs, factor, maxMs, jitter } = this.policy;
    const base = Math.min(maxMs, initialMs * factor ** attempt);
    return base * (1 + jitter * (2 * this.random.next() - 1));
  }

  #sleep(ticket: BackoffTicket): void {
    const ms = this.delayFor(ticket.attempt++);
    this.clock.sleep(ms, ticket.controller.signal).then(() => {
      if (!this.#waiting.has(ticket)) return;
      if (this.tryAcquire()) {
        this.#waiting.delete(ticket);
        ticket.grant();
      } else {
        this.#sleep(ticket);
      }
    }, () => {/* withdrawn: the sleep was aborted on purpose */});
  }

  withdraw(ticket: SlotTicket): boolean {
    const backoffTicket = ticket as BackoffTicket;
    if (!this.#waiting.delete(backoffTicket)) return false;
    backoffTicket.controller.abort();
    return true;
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
