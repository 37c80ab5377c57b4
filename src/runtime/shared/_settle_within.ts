// A wait with a limit on a Clock (virtual in tests), leaving no timer behind:
// the lease manager's dispose (S6) and its wait for the notice channel.
import type { Clock } from "../clock.ts";

/**
 * Waits until every one of `work` settles, or `ms` on `clock` pass, whichever
 * comes first. Aborting `stop` cuts the wait short (a close meanwhile).
 */
export async function settleWithin(
  clock: Clock,
  work: readonly Promise<unknown>[],
  ms: number,
  stop: AbortController = new AbortController(),
): Promise<void> {
  await Promise.race([Promise.allSettled(work), clock.sleep(ms, stop.signal).catch(() => {})]);
  stop.abort();
}
