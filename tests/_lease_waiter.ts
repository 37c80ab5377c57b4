// A lease waiter as a promise, for tests that drive a LeaseManager directly.
import { type Lease, type LeaseManager, LeaseWaiter } from "../src/runtime/shared/lease_manager.ts";

export class PromiseWaiter extends LeaseWaiter {
  readonly granted: Promise<Lease>;
  #resolve!: (lease: Lease) => void;
  #reject!: (error: unknown) => void;

  constructor() {
    super();
    this.granted = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  leaseGranted(lease: Lease): void {
    this.#resolve(lease);
  }

  leaseRefused(error: unknown): void {
    this.#reject(error);
  }
}

/** Queues a waiter on `manager`; returns it. */
export function waitFor(manager: LeaseManager): PromiseWaiter {
  const waiter = new PromiseWaiter();
  manager.enqueue(waiter);
  return waiter;
}

/** A held idle lease at once, else a queued wait for one. */
export function lease(manager: LeaseManager): Promise<Lease> {
  const idle = manager.tryTake();
  return idle ? Promise.resolve(idle) : waitFor(manager).granted;
}
