// The lease manager's subscription to the store's notices (releases, wants,
// hand-overs), made before its first acquire so that a fork registered as
// waiting cannot miss the notice that follows. Pub/sub is at most once: a
// lost notice costs a poll, never the bound.
import type { Clock } from "../clock.ts";
import type { LeaseLogger } from "./_lease_contracts.ts";
import type { LeaseStore, Notice, ReleaseSubscription } from "./lease_store.ts";
import { settleWithin } from "./_settle_within.ts";

/** How long an acquire waits for the channel; an unreachable store is left to polling. */
const SUBSCRIBE_WAIT_MS = 250;

export class NoticeChannel {
  #subscription: ReleaseSubscription | undefined = undefined;
  #subscribed = false;
  #wait: AbortController | undefined = undefined;
  #closed = false;

  constructor(
    readonly store: LeaseStore,
    readonly holder: string,
    readonly clock: Clock,
    readonly logger: LeaseLogger | undefined,
    readonly onNotice: (notice: Notice) => void,
  ) {}

  /** Resolves once subscribed, or after SUBSCRIBE_WAIT_MS at the most. */
  async ready(): Promise<void> {
    const subscription = this.#subscription ?? this.#subscribe();
    if (this.#subscribed) return;
    const wait = new AbortController();
    this.#wait = wait; // close cuts the wait short: no timer outlives the manager
    await settleWithin(this.clock, [subscription.ready], SUBSCRIBE_WAIT_MS, wait);
    this.#wait = undefined;
  }

  /** Stops waiting and unsubscribes; what is returned settles once the connection is closed. */
  close(): Promise<void> | undefined {
    this.#closed = true;
    this.#wait?.abort();
    return this.#subscription?.close();
  }

  #subscribe(): ReleaseSubscription {
    const subscription = this.store.subscribe((notice) => {
      if (!this.#closed) this.onNotice(notice);
    }, this.holder);
    this.#subscription = subscription;
    subscription.ready.then(() => {
      if (this.#subscription === subscription) this.#subscribed = true;
    }, (error) => {
      if (this.#closed || this.#subscription !== subscription) return;
      this.logger?.warn("shared capacity: release notices unavailable; polling meanwhile", {
        key: this.store.key,
        error,
      });
      this.#subscription = undefined; // the next acquire subscribes again
      subscription.close();
    });
    return subscription;
  }
}
