// Tells the user when the store stops answering. An unreachable Redis often
// does not fail a call: ioredis keeps it in its offline queue while it
// reconnects (for over a minute with its default retry strategy), so the
// lease manager, which warns on errors, would stay silent. This wrapper
// reports a call left unanswered for `slowMs` to the manager's health log,
// which warns once per outage, whichever way the outage shows (S3). One timer
// watches every call in flight, not one per call: a setTimeout and
// clearTimeout pair per call cost tens of µs on the path of every hand-off.
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

/** A call in flight, and when it was sent (performance.now()). */
interface Watch {
  readonly operation: string;
  readonly at: number;
}

export class WatchedStore implements LeaseStore {
  readonly #pending = new Set<Watch>();
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  #closed = false;

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

  /** Stops watching (the timer goes); calls made later are not watched. */
  close(): void {
    this.#closed = true;
    this.#pending.clear();
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #watch<T>(operation: string, call: Promise<T>): Promise<T> {
    if (this.#closed) return call;
    const watch: Watch = { operation, at: performance.now() };
    this.#pending.add(watch);
    // A timer already running fires no later than this call's time is up.
    this.#timer ??= setTimeout(this.#check, this.slowMs);
    // A rejection is the client giving up, not the store answering: the
    // manager reports that failure itself.
    const settled = () => this.#pending.delete(watch);
    call.then(() => {
      settled();
      this.health.recovered();
    }, settled);
    return call;
  }

  /** Reports each call whose time is up, once; runs again for the next one due. */
  readonly #check = (): void => {
    this.#timer = undefined;
    const now = performance.now();
    let next = Infinity;
    for (const watch of this.#pending) {
      const due = watch.at + this.slowMs;
      if (due > now) {
        next = Math.min(next, due);
        continue;
      }
      this.#pending.delete(watch);
      this.health.silent(watch.operation, this.slowMs);
    }
    if (next !== Infinity) this.#timer = setTimeout(this.#check, next - now);
  };
}
