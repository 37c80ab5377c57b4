// The fifo policy under a start rate. A start needs a free slot and room in
// the window; the line is served in order (by priority, then first come), so
// a newcomer never starts while anyone waits, even when a slot is free. One
// timer on the runtime's clock, armed only while the head of the line waits
// for the window, wakes the line when the window has room again.
import { type Clock, sleepOn } from "./clock.ts";
import type { StartRate } from "./_rate_window.ts";
import type { SlotPool, SlotWaiter } from "./slot_pool.ts";
import { WaitLine } from "./_wait_line.ts";

export class RatedFifoSlotPool implements SlotPool {
  active = 0;
  readonly #line = new WaitLine<SlotWaiter>();
  /** Aborts the pending wake-up; set while one is armed. */
  #timer: AbortController | undefined = undefined;

  constructor(
    readonly max: number,
    readonly rate: StartRate,
    readonly clock: Clock,
  ) {}

  get waiting(): number {
    return this.#line.size;
  }

  // Between grants every free slot with a waiter is held back by the rate
  // (the line is served whenever both a slot and the window have room).
  get waitingForRate(): number {
    return Math.min(this.#line.size, this.max - this.active);
  }

  tryAcquire(): boolean {
    if (this.#line.size > 0 || this.active >= this.max) return false;
    if (!this.rate.tryTake(this.clock.now())) return false;
    this.active++;
    return true;
  }

  enqueue(waiter: SlotWaiter): void {
    this.#line.push(waiter);
    // A slot is free, so the window is what the line waits for. Never grant
    // here: the caller finishes its own bookkeeping after enqueueing.
    if (this.active < this.max) {
      try {
        this.#arm(this.clock.now());
      } catch (error) {
        // The clock could not sleep: the waiter was never queued.
        this.#line.remove(waiter);
        throw error;
      }
    }
  }

  withdraw(waiter: SlotWaiter): boolean {
    if (!this.#line.remove(waiter)) return false;
    if (this.#line.size === 0) this.#disarm();
    return true;
  }

  withdrawOwnedBy(owner: object): SlotWaiter[] {
    const withdrawn = this.#line.removeWhere((waiter) => waiter.owner === owner);
    if (this.#line.size === 0) this.#disarm();
    return withdrawn;
  }

  release(): void {
    this.active--;
    this.#serve();
  }

  /** Grants slots to the line while both a slot and the window have room. */
  #serve(): void {
    const line = this.#line;
    if (line.size === 0) return;
    const now = this.clock.now();
    while (line.size > 0 && this.active < this.max) {
      if (!this.rate.tryTake(now)) {
        try {
          this.#arm(now);
        } catch (error) {
          // No wake-up can be had from the clock: nobody in the line can
          // start, so they are all told rather than left waiting forever.
          for (let waiter = line.shift(); waiter; waiter = line.shift()) waiter.waitFailed(error);
        }
        return;
      }
      this.active++;
      line.shift()!.slotGranted();
    }
    if (line.size === 0) this.#disarm();
  }

  #arm(now: number): void {
    if (this.#timer !== undefined) return;
    const timer = new AbortController();
    const ms = Math.max(0, this.rate.nextFree(now) - now);
    sleepOn(this.clock, ms, timer.signal, "rate wait ms").then(() => {
      if (this.#timer !== timer) return;
      this.#timer = undefined;
      this.#serve();
    }, () => {/* disarmed on purpose */});
    this.#timer = timer;
  }

  #disarm(): void {
    const timer = this.#timer;
    if (timer === undefined) return;
    this.#timer = undefined;
    timer.abort();
  }
}
