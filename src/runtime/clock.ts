/**
 * The clock a runtime measures time with: the system clock by default, a
 * `VirtualClock` (from `procpool/testing`) in tests.
 *
 * @module
 */
import { received } from "../_validate.ts";
import {
  LongTimeout,
  MAX_TIMEOUT_MS,
  startTimeout,
  stopTimeout,
  type Timeout,
} from "./_long_timeout.ts";

/**
 * A source of time. `sleep` must return a Promise, reject with
 * `signal.reason` as soon as the signal aborts, and keep no timer alive after
 * it settles. It may be asked for any finite duration (a 30-day timeout
 * arrives as 2_592_000_000 ms): `setTimeout` alone overflows above
 * 2^31 - 1 ms and fires at once.
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
export const placeTimer: unique symbol = Symbol("procpool.placeTimer");
export const timerAt: unique symbol = Symbol("procpool.timerAt");

/** A clock with the fast path (user-supplied clocks do not have it). */
export interface TimerClock extends Clock {
  [startTimer](ms: number, entry: TimerEntry): void;
  /** Stops a running timer; harmless after it fired. */
  [stopTimer](entry: TimerEntry): void;
  /**
   * Starts a timer and returns its place, a small non-negative integer with
   * which `timerAt` finds it again while it runs, or -1 if it cannot. A place
   * is a number rather than a pointer so that a long-lived object can
   * remember the timer without being written a young pointer: on the virtual
   * clock, that write (V8's write barrier into the old generation) made a
   * delay about twice as slow. Only the virtual clock has it.
   */
  [placeTimer]?(ms: number, entry: TimerEntry): number;
  /** The running timer at `place` (from `placeTimer`), or undefined if it fired or stopped. */
  [timerAt]?(place: number): TimerEntry | undefined;
}

export function isTimerClock(clock: Clock): clock is TimerClock {
  return startTimer in clock;
}

function fireEntry(entry: TimerEntry): void {
  entry._clockState = undefined;
  entry.timerFired();
}

/**
 * Calls `clock.sleep` and checks that it kept its contract: a clock whose
 * sleep returns no promise would make every wait on it end at once. Throws
 * (TypeError, or what the clock threw) synchronously, so that a caller can
 * undo what it had set up. `what` says what the sleep was for.
 */
export function sleepOn(
  clock: Clock,
  ms: number,
  signal: AbortSignal,
  what: string,
): Promise<void> {
  const sleeping = clock.sleep(ms, signal);
  if (sleeping instanceof Promise) return sleeping;
  if (typeof (sleeping as PromiseLike<void> | undefined)?.then !== "function") {
    throw new TypeError(
      `the runtime's clock.sleep must return a Promise, got ${received(sleeping)} (${what} ${ms})`,
    );
  }
  return Promise.resolve(sleeping);
}

/**
 * The system clock: `Date.now()` and `setTimeout`, with the timer cleared when
 * the signal aborts so nothing leaks. Any finite duration works: one longer
 * than setTimeout can hold (2^31 - 1 ms) is chained on the monotonic clock.
 * The default of every runtime; internal.
 */
export const systemClock: TimerClock = {
  [startTimer](ms: number, entry: TimerEntry): void {
    entry._clockState = ms <= MAX_TIMEOUT_MS
      ? setTimeout(fireEntry, ms, entry)
      : new LongTimeout(ms, () => fireEntry(entry));
  },
  [stopTimer](entry: TimerEntry): void {
    if (entry._clockState !== undefined) stopTimeout(entry._clockState as Timeout);
    entry._clockState = undefined;
  },
  now(): number {
    return Date.now();
  },
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal === undefined) {
      return new Promise((resolve) => startTimeout(resolve, ms));
    }
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        stopTimeout(timer);
        reject(signal.reason);
      };
      const timer = startTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  },
};
