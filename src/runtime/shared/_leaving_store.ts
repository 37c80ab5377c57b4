// What the lease manager does with the store when it is disposed (S6): clear
// its wait record and return what was handed over unheard. (It stops waiting
// for either after a limit, _settle_within.ts, leaving the rest to expire.)
import type { Clock } from "../clock.ts";
import type { LeaseStore } from "./lease_store.ts";

/**
 * Clears `holder`'s wait record at dispose. A release elsewhere may have
 * handed it leases whose notice never came (or comes now, unheard): the
 * reply names them, and they go back too (all but `releasing`, going back
 * already), not left to expire.
 */
export async function withdrawWait(
  store: LeaseStore,
  holder: string,
  clock: Clock,
  releasing: readonly number[],
): Promise<void> {
  const { handed = [] } = await store.wait(holder, 0, clock.now());
  const unheard = handed.filter((fence) => !releasing.includes(fence));
  if (unheard.length > 0) await store.release(holder, unheard);
}
