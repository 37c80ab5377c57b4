// A LeaseStore in memory for the lease manager's unit tests: it grants up to
// `limit` leases and records every call with the virtual time it was made at.
// Tests steer it per call (hang, fail, report others waiting, refuse).
import type {
  AcquireResult,
  Fence,
  FleetView,
  LeaseStore,
  Notice,
  ReleaseResult,
  ReleaseSubscription,
  RenewResult,
} from "../src/runtime/shared/lease_store.ts";
import type { Clock } from "../src/runtime/clock.ts";

export interface Call {
  op: "acquire" | "renew" | "release" | "wait";
  holder: string;
  /** acquire/wait: the count; renew/release: the fences. */
  arg: number | readonly Fence[];
  at: number;
  /** acquire/wait: the tag sent (the manager's send time). */
  tag?: number;
}

/** Replaces the default answer of one kind of call; may hang (a never-settling promise) or throw. */
export type Override<T> = (call: Call) => T | Promise<T>;

export class FakeLeaseStore implements LeaseStore {
  readonly key = "fake";
  readonly calls: Call[] = [];
  readonly held = new Set<Fence>();
  othersWaiting = 0;
  earliestMs = -1;
  /** What every answer says a holder may keep while others wait; 0: give everything back. */
  share = 0;
  #nextFence = 1;
  #seq = 0;
  #onNotice: ((notice: Notice) => void) | undefined;
  subscriptions = 0;
  /** What each subscription's `ready` is; `never()` for a store that does not answer. */
  subscribeReady: () => Promise<void> = () => Promise.resolve();
  closedSubscriptions = 0;
  acquireOverride: Override<AcquireResult> | undefined;
  renewOverride: Override<RenewResult> | undefined;
  releaseOverride: Override<ReleaseResult> | undefined;

  constructor(readonly clock: Clock, readonly limit: number, readonly leaseMs: number) {}

  /** Leases handed to the holder by "others", reported once in the next acquire, renew or wait. */
  handed: Fence[] = [];

  #record(op: Call["op"], holder: string, arg: Call["arg"], tag?: number): Call {
    const call = { op, holder, arg, at: this.clock.now(), tag };
    this.calls.push(call);
    return call;
  }

  ops(op?: Call["op"]): Call[] {
    return this.calls.filter((call) => op === undefined || call.op === op);
  }

  /** The next view number (ShareView.seq), as a store call takes it. */
  nextSeq(): number {
    return ++this.#seq;
  }

  #takeHanded(): Fence[] {
    const handed = this.handed;
    this.handed = [];
    return handed;
  }

  acquire(holder: string, want: number, tag?: number): Promise<AcquireResult> {
    const call = this.#record("acquire", holder, want, tag);
    if (this.acquireOverride) return Promise.resolve(this.acquireOverride(call));
    const granted: Fence[] = [];
    while (granted.length < want && this.held.size < this.limit) {
      const fence = this.#nextFence++;
      this.held.add(fence);
      granted.push(fence);
    }
    return Promise.resolve({
      granted,
      handed: this.#takeHanded(),
      othersWaiting: this.othersWaiting,
      earliestMs: this.earliestMs,
      share: this.share,
      seq: this.nextSeq(),
    });
  }

  renew(holder: string, fences: readonly Fence[]): Promise<RenewResult> {
    const call = this.#record("renew", holder, [...fences]);
    if (this.renewOverride) return Promise.resolve(this.renewOverride(call));
    const lost = fences.filter((fence) => !this.held.has(fence));
    return Promise.resolve({
      lost,
      handed: this.#takeHanded(),
      othersWaiting: this.othersWaiting,
      earliestMs: this.earliestMs,
      share: this.share,
      seq: this.nextSeq(),
    });
  }

  release(holder: string, fences: readonly Fence[]): Promise<ReleaseResult> {
    const call = this.#record("release", holder, [...fences]);
    if (this.releaseOverride) return Promise.resolve(this.releaseOverride(call));
    const released = fences.filter((fence) => this.held.delete(fence)).length;
    return Promise.resolve({
      released,
      othersWaiting: this.othersWaiting,
      share: this.share,
      seq: this.nextSeq(),
    });
  }

  wait(holder: string, want: number, tag?: number): Promise<FleetView> {
    this.#record("wait", holder, want, tag);
    return Promise.resolve({
      handed: this.#takeHanded(),
      othersWaiting: this.othersWaiting,
      earliestMs: this.earliestMs,
      share: this.share,
      seq: this.nextSeq(),
    });
  }

  subscribe(onNotice: (notice: Notice) => void, _holder: string): ReleaseSubscription {
    this.subscriptions++;
    this.#onNotice = onNotice;
    return {
      ready: this.subscribeReady(),
      close: () => {
        this.closedSubscriptions++;
        this.#onNotice = undefined;
        return Promise.resolve();
      },
    };
  }

  /** A release elsewhere handed a new lease to `holder` (its notice is for the caller to deliver). */
  handOver(): Fence {
    const fence = this.#nextFence++;
    this.held.add(fence);
    return fence;
  }

  /** Delivers a notice, as pub/sub would. */
  notify(notice: Notice = { kind: "released" }): void {
    this.#onNotice?.(notice);
  }
}

/** A promise that never settles: a call lost in a partition. */
export function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}
