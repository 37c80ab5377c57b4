// Tells the user when the store stops answering. An unreachable Redis often
// does not fail a call: ioredis keeps it in its offline queue while it
// reconnects (for over a minute with its default retry strategy), so the
// lease manager, which warns on errors, would stay silent. This wrapper
// reports a call left unanswered for `slowMs` to the manager's health log,
// which warns once per outage, whichever way the outage shows (S3).
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

/** Where the watch reports: the lease manager's one record of the store's health. */
export interface SilenceReport {
  /** A call has gone unanswered for `ms`. */
  silent(operation: string, ms: number): void;
  /** A call was answered. */
  recovered(): void;
}

export class WatchedStore implements LeaseStore {
  constructor(
    readonly inner: LeaseStore,
    readonly health: SilenceReport,
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

  acquire(holder: string, want: number, tag?: number): Promise<AcquireResult> {
    return this.#watch("acquire", this.inner.acquire(holder, want, tag));
  }

  renew(holder: string, fences: readonly Fence[]): Promise<RenewResult> {
    return this.#watch("renew", this.inner.renew(holder, fences));
  }

  release(holder: string, fences: readonly Fence[]): Promise<ReleaseResult> {
    return this.#watch("release", this.inner.release(holder, fences));
  }

  wait(holder: string, want: number, tag?: number): Promise<FleetView> {
    return this.#watch("wait", this.inner.wait(holder, want, tag));
  }

  subscribe(onNotice: (notice: Notice) => void, holder: string): ReleaseSubscription {
    return this.inner.subscribe(onNotice, holder);
  }

  #watch<T>(operation: string, call: Promise<T>): Promise<T> {
    const timer = setTimeout(() => this.health.silent(operation, this.slowMs), this.slowMs);
    // A rejection is the client giving up, not the store answering: the
    // manager reports that failure itself.
    call.then(() => this.health.recovered(), () => {}).finally(() => clearTimeout(timer));
    return call;
  }
}
