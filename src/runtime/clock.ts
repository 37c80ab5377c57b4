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
 * @example A clock of your own, here one that counts its sleeps
 * ```ts
 * import { type Clock, Runtime } from "@procpool/procpool";
 * let sleeps = 0;
 * const clock: Clock = {
 *   now: () => Date.now(),
 *   sleep: (ms, signal) => {
 *     sleeps++;
 *     return new Promise((resolve, reject) => {
 *       const timer = setTimeout(resolve, ms);
 *       signal?.addEventListener("abort", () => {
 *         clearTimeout(timer);
 *         reject(signal.reason);
 *       }, { once: true });
 *     });
 *   },
 * };
 * await using runtime = new Runtime({ maxProcesses: 1, clock });
 * await runtime.runApp((app) => app.evalLang((lang) => lang.delay(1)));
 * console.assert(sleeps === 1);
 * ```
 */
export interface Clock {
  /** The current time in milliseconds. */
  now(): number;
  /** Resolves after `ms` milliseconds; rejects with `signal.reason` on abort. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * A timer the clocks procpool ships can run without an AbortSignal. Adding
 * and removing an abort listener per `delay` cost more than the delay itself;
 * LangL stops its timers through its own cancellation hooks instead.
 */
export abstract class TimerEntry {
  /** The clock's bookkeeping while the timer runs (a timeout id, a bucket). */
  _clockState: unknown = undefined;
  /** Runs once when the timer is due (not after `stopTimer`). */
  abstract timerFired(): void;
}

export const startTimer: unique symbol = Symbol("procpool.startTimer");
export const stopTimer: unique symbol = Symbol("procpool.stopTimer");

/** A clock with the fast path (user-supplied clocks do not have it). */
export interface TimerClock extends Clock {
  [startTimer](ms: number, entry: TimerEntry): void;
  /** Stops a running timer; harmless after it fired. */
  [stopTimer](entry: TimerEntry): void;
}

export function isTimerClock(clock: Clock): clock is TimerClock {
  return startTimer in clock;
}

function fireEntry(entry: TimerEntry): void {
  entry._clockState = undefined;
  entry.timerFired();
}

/**
 * The system clock: `Date.now()` and `setTimeout`, with the timer cleared when
 * the signal aborts so nothing leaks. The default of every runtime; internal.
 */
export const systemClock: TimerClock = {
  [startTimer](ms: number, entry: TimerEntry): void {
    entry._clockState = setTimeout(fireEntry, ms, entry);
  },
  [stopTimer](entry: TimerEntry): void {
    if (entry._clockState !== undefined) clearTimeout(entry._clockState as number);
    entry._clockState = undefined;
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
