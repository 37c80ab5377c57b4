// One held lease (its fence, deadline and loss signal), and the health
// report the held leases give the lease manager (_store_health.ts).
import type { LeaseLostError } from "../../errors.ts";
import type { Fence } from "./lease_store.ts";

/** Told once when a lease is lost: the process holding it, which then stops. */
export interface LeaseLossListener {
  leaseLost(reason: LeaseLostError): void;
}

/** A lease as a process sees it. */
export interface Lease {
  /** The fencing token (S8). */
  readonly fence: Fence;
  /** Aborted with a `LeaseLostError` when the lease was not renewed before its local deadline. */
  readonly signal: AbortSignal;
  /** That `LeaseLostError` once the lease is lost; undefined until then. */
  readonly lostReason: LeaseLostError | undefined;
  /** The one listener told of the loss, synchronously (the process using the lease). */
  listener: LeaseLossListener | undefined;
}

/**
 * One held lease. `busy` while a process uses it. Its AbortController is made
 * only if someone asks for `signal`: the Runtime listens through `listener`,
 * and a controller with a listener added and removed cost every hand-over
 * tens of µs.
 */
export class LeaseEntry implements Lease {
  busy = false;
  idleSince = 0;
  lostReason: LeaseLostError | undefined = undefined;
  listener: LeaseLossListener | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  constructor(readonly fence: Fence, public deadline: number) {}
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.lost) this.#controller.abort(this.lostReason);
    }
    return this.#controller.signal;
  }
  get lost(): boolean {
    return this.lostReason !== undefined;
  }
  /** The local deadline passed, or the store no longer has it. */
  lose(reason: LeaseLostError): void {
    this.lostReason = reason;
    this.#controller?.abort(reason);
    this.listener?.leaseLost(reason);
  }
}

/** Tells the manager how the store answers; it logs outages once. */
export interface StoreHealth {
  failed(operation: string, error: unknown): void;
  recovered(): void;
  /** A lease in use was lost (its process is being cancelled with LeaseLostError). */
  lostInUse(fence: Fence): void;
}
