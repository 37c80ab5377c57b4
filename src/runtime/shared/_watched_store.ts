// Tells the user when the store stops answering. An unreachable Redis often
// does not fail a call: ioredis keeps it in its offline queue while it
// reconnects (for over a minute with its default retry strategy), so the
// lease manager, which warns on errors, would stay silent. This wrapper warns
// once a call has gone unanswered for `slowMs`, once per outage, and says when
// the store answers again (S3).
import type { LeaseLogger } from "./_lease_contracts.ts";
import type {
  AcquireResult,
  Fence,
  FleetView,
  LeaseStore,
  Notice,
  ReleaseResult,
  ReleaseSubscription,
  RenewResult,
} from "./lease_store.ts";

export class WatchedStore implements LeaseStore {
  #slow = false;

  constructor(
    readonly inner: LeaseStore,
    readonly logger: LeaseLogger,
    readonly slowMs: number,
  ) {}

  get key(): string {
    return this.inner.key;
  }

  get limit(): number {
    return this.inner.limit;
  }

  get leaseMs(): number {
    return this.inner.leaseMs;
  }

  acquire(holder: string, want: number): Promise<AcquireResult> {
    return this.#watch("acquire", this.inner.acquire(holder, want));
  }

  renew(holder: string, fences: readonly Fence[]): Promise<RenewResult> {
    return this.#watch("renew", this.inner.renew(holder, fences));
  }

  release(holder: string, fences: readonly Fence[]): Promise<ReleaseResult> {
    return this.#watch("release", this.inner.release(holder, fences));
  }

  wait(holder: string, want: number): Promise<FleetView> {
    return this.#watch("wait", this.inner.wait(holder, want));
  }

  subscribe(onNotice: (notice: Notice) => void): ReleaseSubscription {
    return this.inner.subscribe(onNotice);
  }

  #watch<T>(operation: string, call: Promise<T>): Promise<T> {
    const timer = setTimeout(() => {
      if (this.#slow) return;
      this.#slow = true;
      this.logger.warn(
        "shared capacity: the store has not answered for {ms} ms; waiting forks keep waiting",
        { key: this.key, operation, ms: this.slowMs },
      );
    }, this.slowMs);
    return call.finally(() => {
      clearTimeout(timer);
      if (!this.#slow) return;
      this.#slow = false;
      this.logger.info("shared capacity: the store answers again", { key: this.key, operation });
    });
  }
}
