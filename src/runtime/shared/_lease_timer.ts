// One re-armable timer on a Clock: the lease manager keeps four (wake, renew,
// deadline, idle), each at most once armed, so nothing piles up or leaks.
// A timer asked for later than the one already running keeps that one, which
// on firing re-arms for the rest; `cancel` lets it run out. Most re-armings
// are to a later time, or to any time in a range (the wake after every
// acquire, anywhere in its poll's jitter range; the deadline after every
// renewal), and on a runtime with npm packages loaded a setTimeout and
// clearTimeout pair cost tens of µs on the path of every hand-off.
import {
  type Clock,
  isTimerClock,
  startTimer,
  stopTimer,
  type TimerClock,
  TimerEntry,
} from "../clock.ts";

/** The abort reason of a superseded sleep on a clock without the fast path (never seen). */
const SUPERSEDED = new Error("lease timer re-armed");

export class LeaseTimer extends TimerEntry {
  /** When the owner wants `fire` called, on the clock; Infinity: not wanted. */
  #dueAt = Infinity;
  /** When the timer running on the clock fires; Infinity: none runs. */
  #firesAt = Infinity;
  #controller: AbortController | undefined;
  /** The clock, if it has the fast path (decided once: a clock keeps its kind). */
  readonly #timerClock: TimerClock | undefined;

  constructor(readonly clock: Clock, readonly fire: () => void) {
    super();
    this.#timerClock = isTimerClock(clock) ? clock : undefined;
  }

  get armed(): boolean {
    return this.#dueAt !== Infinity;
  }

  /**
   * Fires `ms` from now, or up to `slackMs` later, replacing any earlier
   * arming. A timer running no later serves (firing first, it re-arms for
   * the rest), as does one within the slack.
   */
  set(ms: number, slackMs = 0): void {
    const now = this.clock.now();
    this.#dueAt = now + ms;
    if (this.#firesAt <= this.#dueAt + slackMs) return;
    this.#stop();
    this.#start(ms, this.#dueAt);
  }

  /** Not wanted any more; the running timer, if any, runs out and does nothing. */
  cancel(): void {
    this.#dueAt = Infinity;
  }

  /** Not wanted any more, and nothing left on the clock. */
  clear(): void {
    this.#dueAt = Infinity;
    this.#stop();
  }

  /** The clock's callback (fast path), or the sleep's. */
  timerFired(): void {
    const due = this.#dueAt, armedFor = this.#firesAt;
    this.#firesAt = Infinity;
    if (due === Infinity) return;
    // Fired before the time asked (a timer kept from an earlier arming): on to
    // that time, unless a pause has carried the clock past it. Then it fires
    // now, in the order the timers that came due during the pause fire, not
    // behind them all (the deadline timer must not come after a script's).
    if (due > armedFor) {
      const now = this.clock.now();
      if (due > now) return this.#start(due - now, due);
    }
    this.#dueAt = Infinity;
    this.fire();
  }

  #start(ms: number, at: number): void {
    this.#firesAt = at;
    if (this.#timerClock !== undefined) return this.#timerClock[startTimer](ms, this);
    const controller = new AbortController();
    this.#controller = controller;
    this.clock.sleep(ms, controller.signal).then(() => {
      if (this.#controller !== controller) return;
      this.#controller = undefined;
      this.timerFired();
    }, () => {});
  }

  #stop(): void {
    if (this.#firesAt === Infinity) return;
    this.#firesAt = Infinity;
    const controller = this.#controller;
    if (controller !== undefined) {
      this.#controller = undefined;
      controller.abort(SUPERSEDED);
    } else {
      this.#timerClock?.[stopTimer](this);
    }
  }
}
