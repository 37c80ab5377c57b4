// The leases a runtime gives back. HeldLeases (_held_leases.ts) owns one.
// A release with none unanswered goes out at once: on the path from a
// process's end here to another runtime's start (the store hands the lease
// over inside the call), a microtask's wait was the rest of the stopping
// process's bookkeeping and the next fork's, 20-30 µs. Those that follow
// while one is unanswered go together, one call for each turn of the event
// loop, so a burst of ends costs two calls, not one per lease.
import type { StoreHealth } from "./_lease_entry.ts";
import type { Fence, LeaseStore, ReleaseResult } from "./lease_store.ts";

export interface ReleaseBatchOptions {
  readonly store: LeaseStore;
  readonly holder: string;
  readonly health: StoreHealth;
  /** The store answered a release. */
  readonly answered: (result: ReleaseResult) => void;
  /** Capacity may be free again in the store: waiting forks may try. */
  readonly freed: () => void;
}

export class ReleaseBatch {
  #fences: Fence[] = [];
  #inFlight: Promise<unknown> | undefined = undefined;
  #closed = false;

  constructor(readonly options: ReleaseBatchOptions) {}

  /** The last release call, while it is unanswered. */
  get inFlight(): Promise<unknown> | undefined {
    return this.#inFlight;
  }

  /** Whether `fence` waits to go back in this turn's call. */
  has(fence: Fence): boolean {
    return this.#fences.includes(fence);
  }

  add(fence: Fence): void {
    if (this.#closed) return;
    this.#fences.push(fence);
    if (this.#fences.length > 1) return;
    if (this.#inFlight === undefined) this.#send();
    else queueMicrotask(() => this.#send());
  }

  /** Sends nothing more; returns the fences not sent yet. */
  close(): Fence[] {
    this.#closed = true;
    const fences = this.#fences;
    this.#fences = [];
    return fences;
  }

  async #send(): Promise<void> {
    const fences = this.#fences;
    this.#fences = [];
    if (fences.length === 0 || this.#closed) return;
    const { store, holder, health } = this.options;
    let freed = true;
    const call = store.release(holder, fences);
    this.#inFlight = call;
    try {
      const result = await call;
      if (this.#closed) return;
      this.options.answered(result);
      // Leases the store handed straight to other waiters freed nothing here:
      // asking again would cost a round trip per job and find nothing.
      freed = result.released > (result.handedOver ?? 0);
    } catch (error) {
      // The leases expire in the store: the bound holds, capacity returns later.
      if (!this.#closed) health.failed("release", error);
    } finally {
      if (this.#inFlight === call) this.#inFlight = undefined;
    }
    if (freed && !this.#closed) this.options.freed();
  }
}
