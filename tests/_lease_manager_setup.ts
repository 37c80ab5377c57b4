// The lease manager's test set-up: a manager on virtual time over an
// in-memory store, and a waiter that records what it was told.
import { VirtualClock } from "../testing.ts";
import {
  type Lease,
  LeaseManager,
  type LeaseManagerOptions,
  LeaseWaiter,
} from "../src/runtime/shared/lease_manager.ts";
import { FakeLeaseStore } from "./_fake_lease_store.ts";

export class Waiter extends LeaseWaiter {
  lease: Lease | undefined;
  refused: unknown;
  leaseGranted(lease: Lease): void {
    this.lease = lease;
  }
  leaseRefused(error: unknown): void {
    this.refused = error;
  }
}

export const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** A manager on a virtual clock starting at `start`, over a store with `limit` leases of 3 s. */
export function setup(limit = 4, options: Partial<LeaseManagerOptions> = {}, start = 0) {
  const clock = new VirtualClock(start);
  const store = new FakeLeaseStore(clock, limit, 3_000);
  const logs: string[] = [];
  const manager = new LeaseManager(store, {
    maxHeld: 8,
    holder: "me",
    clock,
    random: () => 0.5,
    logger: { warn: (m) => logs.push(`warn: ${m}`), info: (m) => logs.push(`info: ${m}`) },
    ...options,
  });
  const waiters = async (n: number) => {
    const all = Array.from({ length: n }, () => new Waiter());
    for (const waiter of all) manager.enqueue(waiter);
    await turn();
    return all;
  };
  return { clock, store, manager, logs, waiters };
}
