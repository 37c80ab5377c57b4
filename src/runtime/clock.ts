/**
 * The clock a runtime measures time with: the system clock by default, a
 * `VirtualClock` (from `procpool/testing`) in tests.
 *
 * @module
 */

/**
 * A source of time. `sleep` must reject with `signal.reason` as soon as the
 * signal aborts, and must not keep any timer alive after it settles.
 *
 * @example A clock that wraps the system clock
 * ```ts
 * import { type Clock, systemClock } from "./clock.ts";
 * const clock: Clock = systemClock;
 * const before = clock.now();
 * await clock.sleep(1);
 * console.assert(clock.now() >= before);
 * ```
 */
export interface Clock {
  /** The current time in milliseconds. */
  now(): number;
  /** Resolves after `ms` milliseconds; rejects with `signal.reason` on abort. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Told when a timer is due. */
export interface TimerTarget {
  timerFired(): void;
}

/** A running timer. */
export interface Timer {
  /** Calls the timer off; harmless after it fired. */
  cancel(): void;
}

/**
 * The fast path of the clocks procpool ships: a timer without an AbortSignal.
 * Adding and removing an abort listener per `delay` cost more than the delay
 * itself; LangL calls this instead and cancels through its own hook list.
 */
export const startTimer: unique symbol = Symbol("procpool.startTimer");

/** A clock with the internal fast path. */
export interface TimerClock extends Clock {
  [startTimer](ms: number, target: TimerTarget): Timer;
}

/** Whether `clock` offers the fast path (user-supplied clocks do not). */
export function isTimerClock(clock: Clock): clock is TimerClock {
  return startTimer in clock;
}

/**
 * The system clock: `Date.now()` and `setTimeout`, with the timer cleared when
 * the signal aborts so nothing leaks.
 *
 * @example
 * ```ts
 * import { systemClock } from "./clock.ts";
 * const controller = new AbortController();
 * const sleeping = systemClock.sleep(60_000, controller.signal);
 * controller.abort(new Error("no need to wait"));
 * await sleeping.catch((e) => console.assert(e.message === "no need to wait"));
 * ```
 */
export const systemClock: TimerClock = {
  [startTimer](ms: number, target: TimerTarget): Timer {
    const id = setTimeout(() => target.timerFired(), ms);
    return { cancel: () => clearTimeout(id) };
  },
  now(): number {
    return Date.now();
  },
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal === undefined) {
      return new Promise((resolve) => setTimeout(resolve, ms));
    }
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  },
};
