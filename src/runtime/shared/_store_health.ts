// One warning per store outage (S3), whether calls fail or go unanswered, and
// one line when the store answers again: every call of an outage would
// otherwise log its own. Also a warning for each lease lost while a process
// used it.
import type { StoreHealth } from "./_lease_entry.ts";
import type { LeaseLogger } from "./_lease_contracts.ts";

export class StoreHealthLog implements StoreHealth {
  #failing = false;

  constructor(readonly key: string, readonly logger: LeaseLogger | undefined) {}

  failed(operation: string, error: unknown): void {
    this.#outage("shared capacity: the store did not answer; retrying", { operation, error });
  }

  /** A call has gone unanswered for `ms` (_watched_store.ts): an outage too. */
  silent(operation: string, ms: number): void {
    this.#outage(
      "shared capacity: the store has not answered for {ms} ms; waiting forks keep waiting",
      { operation, ms },
    );
  }

  /** The first sign of an outage warns; the rest of it is quiet until recovered. */
  #outage(message: string, properties: Record<string, unknown>): void {
    if (this.#failing) return;
    this.#failing = true;
    this.logger?.warn(message, { key: this.key, ...properties });
  }

  /** Said for every lease: each stands for a process cancelled mid-run, which an operator wants to see. */
  lostInUse(fence: number): void {
    this.logger?.warn(
      "shared capacity: a lease in use was not renewed in time; its process is cancelled with LeaseLostError",
      { key: this.key, fence },
    );
  }

  recovered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    this.logger?.info("shared capacity: the store answers again", { key: this.key });
  }
}
