// Admitting a process on a runtime with a shared capacity (API.md S1): the
// lease that came with its slot goes to the process.
import type { LeaseLostError } from "../errors.ts";
import { setFence } from "../lang/interpreter.ts";
import type { Lease, LeaseLossListener } from "../runtime/shared/lease_manager.ts";
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
  if (lease === undefined) return;
  setFence(record.lang, lease.fence);
  if (lease.lostReason !== undefined) record.leaseLost(lease.lostReason);
  lease.listener = record.extras().lease = new LeaseHold(lease, record);
}

/**
 * A running process's lease (S1), and its listener for the lease's loss
 * (S2): one object for both, one allocation.
 */
export class LeaseHold implements LeaseLossListener {
  constructor(readonly lease: Lease, readonly record: ProcessRecord) {}

  leaseLost(reason: LeaseLostError): void {
    this.record.leaseLost(reason);
  }

  /** The process stopped: the lease goes back through the pool. */
  release(shared: SharedSlotPool): void {
    this.record.extras().lease = undefined;
    if (this.lease.listener === this) this.lease.listener = undefined;
    shared.releaseLease(this.lease);
  }
}
