// The clock leases are measured on. Local deadlines are durations from a send
// time (S2), so they need a clock that only moves forward at a steady rate:
// `Date.now()` jumps when the host's wall clock is set (NTP steps, a manual
// change), and a step back would push every local deadline past the store's.
// Its timers are the system clock's, fast path included (_lease_timer.ts).
import { startTimer, stopTimer, systemClock, type TimerClock } from "../clock.ts";

export const monotonicClock: TimerClock = {
  now: () => performance.now(),
  sleep: (ms, signal) => systemClock.sleep(ms, signal),
  [startTimer]: (ms, entry) => systemClock[startTimer](ms, entry),
  [stopTimer]: (entry) => systemClock[stopTimer](entry),
};
