// One re-armable timer on a Clock: the lease manager keeps four (wake, renew,
// deadline, idle), each at most once armed, so nothing piles up or leaks.
// A hand-over re-arms two of them, on the path from the notice to the start:
// on a clock with the timer fast path (procpool's own) that is a clearTimeout
// and a setTimeout, where a sleep aborted through an AbortController cost
// about 0.2 ms (the abort's DOMException, listeners, a rejected promise).
import { type Clock, isTimerClock, startTimer, stopTimer, TimerEntry } from "../clock.ts";

/** The abort reason of a superseded sleep on a clock without the fast path (never seen). */
const SUPERSEDED = new Error("lease timer re-armed");

export class LeaseTimer extends TimerEntry {
  #armed = false;
  #controller: AbortController | undefined;

  constructor(readonly clock: Clock, readonly fire: () => void) {
    super();
  }

  get armed(): boolean {
    return this.#armed;
  }

  /** Fires `ms` from now, replacing any earlier arming. */
  set(ms: number): void {
    this.clear();
    this.#armed = true;
    const clock = this.clock;
    if (isTimerClock(clock)) return clock[startTimer](ms, this);
    const controller = new AbortController();
    this.#controller = controller;
    clock.sleep(ms, controller.signal).then(() => {
      if (this.#controller !== controller) return;
      this.#controller = undefined;
      this.timerFired();
    }, () => {});
  }

  /** The clock's callback (fast path), or the sleep's. */
  timerFired(): void {
    this.#armed = false;
    this.fire();
  }

  clear(): void {
    if (!this.#armed) return;
    this.#armed = false;
    const controller = this.#controller;
    if (controller !== undefined) {
      this.#controller = undefined;
      controller.abort(SUPERSEDED);
    } else if (isTimerClock(this.clock)) {
      this.clock[stopTimer](this);
    }
  }
}
