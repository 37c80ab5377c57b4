// One warning per store outage (S3), and one line when the store answers
// again: every failing call of an outage would otherwise log its own.
import type { StoreHealth } from "./_held_leases.ts";
import type { LeaseLogger } from "./_lease_contracts.ts";

export class StoreHealthLog implements StoreHealth {
  #failing = false;

  constructor(readonly key: string, readonly logger: LeaseLogger | undefined) {}

  failed(operation: string, error: unknown): void {
    if (this.#failing) return;
    this.#failing = true;
    this.logger?.warn("shared capacity: the store did not answer; retrying", {
      key: this.key,
      operation,
      error,
    });
  }

  recovered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    this.logger?.info("shared capacity: the store answers again", { key: this.key });
  }
}
