// Admitting a process on a runtime with a shared capacity (API.md S1): the
// lease that came with its slot goes to the process.
import type { SharedSlotPool } from "../runtime/shared/shared_slot_pool.ts";
import type { CheckedForkOptions } from "./_options.ts";
import type { ProcessRecord } from "./process.ts";

/** Admission on a runtime with a shared capacity: the grant's lease goes to the process. */
export function admitUnderLease(
  record: ProcessRecord,
  options: CheckedForkOptions,
  shared: SharedSlotPool,
): void {
  // Claimed first, whatever happens next: a lease nobody claims would be
  // renewed forever.
  const lease = shared.claimLease();
  try {
    record.begin(options);
  } catch (error) {
    if (lease !== undefined) shared.releaseLease(lease);
    throw error;
  }
  if (lease !== undefined) record.holdLease(lease);
}
