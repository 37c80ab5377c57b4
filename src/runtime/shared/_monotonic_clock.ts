// The clock leases are measured on. Local deadlines are durations from a send
// time (S2), so they need a clock that only moves forward at a steady rate:
// `Date.now()` jumps when the host's wall clock is set (NTP steps, a manual
// change), and a step back would push every local deadline past the store's.
import { type Clock, systemClock } from "../clock.ts";

export const monotonicClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) => systemClock.sleep(ms, signal),
};
