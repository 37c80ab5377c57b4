// One held lease (its fence, deadline and loss signal), and the health
// report the held leases give the lease manager (_store_health.ts).
import type { Fence } from "./lease_store.ts";

/** A lease as a process sees it. */
export interface Lease {
  /** The fencing token (S8). */
  readonly fence: Fence;
  /** Aborted with a `LeaseLostError` when the lease was not renewed before its local deadline. */
  readonly signal: AbortSignal;
}

/** One held lease. `busy` while a process uses it. */
export class LeaseEntry implements Lease {
  readonly controller = new AbortController();
  busy = false;
  idleSince = 0;
  constructor(readonly fence: Fence, public deadline: number) {}
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  get lost(): boolean {
    return this.controller.signal.aborted;
  }
}

/** Tells the manager how the store answers; it logs outages once. */
export interface StoreHealth {
  failed(operation: string, error: unknown): void;
  recovered(): void;
  /** A lease in use was lost (its process is being cancelled with LeaseLostError). */
  lostInUse(fence: Fence): void;
}
