// The lease manager's logic on virtual time, against an in-memory store:
// batching, renewal from the send time, loss, hand-off, idling, waking.
import { assert, assertEquals, assertInstanceOf } from "@std/assert";
import { CapacityMismatchError, LeaseLostError } from "../mod.ts";
import { VirtualClock } from "../testing.ts";
import {
  type Lease,
  LeaseManager,
  type LeaseManagerOptions,
  LeaseWaiter,
} from "../src/runtime/shared/lease_manager.ts";
import { FakeLeaseStore, never } from "./_fake_lease_store.ts";
import { waitFor } from "./_lease_waiter.ts";
import { stopMarginFor } from "../src/runtime/shared/shared_slot_pool.ts";

class Waiter extends LeaseWaiter {
  lease: Lease | undefined;
  refused: unknown;
  leaseGranted(lease: Lease): void {
    this.lease = lease;
  }
  leaseRefused(error: unknown): void {
    this.refused = error;
  }
}

const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

function setup(limit = 4, options: Partial<LeaseManagerOptions> = {}) {
  const clock = new VirtualClock(0);
  const store = new FakeLeaseStore(clock, limit, 3_000);
  const logs: string[] = [];
  const manager = new LeaseManager(store, {
    maxHeld: 8,
    holder: "me",
    clock,
    random: () => 0.5,
    logger: { warn: (m) => logs.push(`warn: ${m}`), info: (m) => logs.push(`info: ${m}`) },
    ...options,
  });
  const waiters = async (n: number) => {
    const all = Array.from({ length: n }, () => new Waiter());
    for (const waiter of all) manager.enqueue(waiter);
    await turn();
    return all;
  };
  return { clock, store, manager, logs, waiters };
}

Deno.test("lease manager: acquiring", async (t) => {
  await t.step("forks queued in one turn are asked for in one acquire, served FIFO", async () => {
    const { store, manager, waiters } = setup(4);
    const ws = await waiters(3);
    assertEquals(store.ops("acquire").map((c) => c.arg), [3]);
    assertEquals(ws.map((w) => w.lease?.fence), [1, 2, 3]);
    assertEquals(manager.held, 3);
    await manager.dispose();
  });

  await t.step("never asks for more than maxHeld", async () => {
    const { store, manager, waiters } = setup(10, { maxHeld: 2 });
    await waiters(5);
    assertEquals(store.ops("acquire").map((c) => c.arg), [2]);
    assertEquals(manager.held, 2);
    await manager.dispose();
  });

  await t.step("a release notice wakes a waiting manager at once", async () => {
    const { store, manager, waiters, clock } = setup(1, { pollMinMs: 10_000, pollMaxMs: 10_000 });
    const [, second] = await waiters(2);
    assertEquals(second.lease, undefined);
    store.held.clear(); // another runtime released
    store.notify();
    await turn();
    assertEquals(second.lease?.fence, 2);
    assertEquals(clock.now(), 0);
    await manager.dispose();
  });

  await t.step("without notices it polls with jittered backoff, capped", async () => {
    const { store, manager, waiters, clock } = setup(0, { pollMinMs: 40, pollMaxMs: 200 });
    await waiters(1);
    for (let i = 0; i < 6; i++) {
      await clock.advance(1_000);
      await turn();
    }
    const times = store.ops("acquire").map((c) => c.at);
    // random() = 0.5 puts each delay at 3/4 of its cap: 30, 60, 120, 150, 150, ...
    const gaps = times.slice(1).map((at, i) => at - times[i]);
    assertEquals(gaps.slice(0, 5), [30, 60, 120, 150, 150]);
    await manager.dispose();
  });

  await t.step("it wakes for the earliest lease deadline (expiry publishes nothing)", async () => {
    const { store, manager, waiters, clock } = setup(0, { pollMinMs: 10_000, pollMaxMs: 10_000 });
    store.earliestMs = 100;
    await waiters(1);
    await clock.advance(500);
    await turn();
    assertEquals(store.ops("acquire").map((c) => c.at).slice(0, 2), [0, 120]);
    await manager.dispose();
  });

  await t.step("a limit mismatch refuses every waiting fork", async () => {
    const { store, manager, waiters } = setup(4);
    store.acquireOverride = () => Promise.reject(new CapacityMismatchError("fake", 4, 5));
    const ws = await waiters(2);
    for (const w of ws) assertInstanceOf(w.refused, CapacityMismatchError);
    assertEquals(manager.waiting, 0);
    await manager.dispose();
  });

  await t.step("an unreachable store: forks keep waiting, retry, one warning", async () => {
    const { store, manager, waiters, clock, logs } = setup(4, { pollMinMs: 20, pollMaxMs: 80 });
    store.acquireOverride = () => Promise.reject(new Error("ECONNREFUSED"));
    const [w] = await waiters(1);
    await clock.advance(300);
    await turn();
    assert(store.ops("acquire").length >= 4);
    assertEquals(logs, ["warn: shared capacity: the store did not answer; retrying"]);
    store.acquireOverride = undefined;
    await clock.advance(100);
    await turn();
    assertEquals(w.lease?.fence, 1);
    assertEquals(logs.at(-1), "info: shared capacity: the store answers again");
    await manager.dispose();
  });

  await t.step("withdrawing the last waiter clears the wait record in the store", async () => {
    const { store, manager, waiters } = setup(1);
    const [, second] = await waiters(2);
    assert(manager.withdraw(second));
    await turn();
    assertEquals(store.ops("wait").map((c) => c.arg), [0]);
    await manager.dispose();
  });
});

Deno.test("lease manager: holding", async (t) => {
  await t.step("renews every held lease in one call, well before the deadline", async () => {
    const { store, manager, waiters, clock } = setup(4);
    await waiters(3);
    await clock.advance(1_000);
    await turn();
    assertEquals(store.ops("renew").map((c) => [c.at, c.arg]), [[1_000, [1, 2, 3]]]);
    await manager.dispose();
  });

  await t.step("the local deadline counts from the send time of the last renewal", async () => {
    const { store, manager, waiters, clock } = setup(4);
    const [w] = await waiters(1);
    // The renewal sent at 1000 is answered at 1500; every later one hangs.
    let answer: () => void = () => {};
    store.renewOverride = (call) =>
      call.at === 1_000
        ? new Promise((resolve) =>
          answer = () => resolve({ lost: [], othersWaiting: 0, earliestMs: -1, share: 0 })
        )
        : never();
    await clock.advance(1_500);
    answer();
    await turn();
    await clock.advance(3_999 - 1_500);
    await turn();
    assertEquals(w.lease?.signal.aborted, false);
    await clock.advance(1);
    await turn();
    assertInstanceOf(w.lease?.signal.reason, LeaseLostError); // at 1000 + 3000, not 1500 + 3000
    assertEquals(manager.held, 0);
    await manager.dispose();
  });

  await t.step("a lease lost while in use is logged as a warning, once per lease", async () => {
    const { store, manager, waiters, clock, logs } = setup(4);
    const [a, b] = await waiters(2);
    manager.release(b.lease!); // b's lease idles: losing it cancels nothing
    store.renewOverride = () => never();
    await clock.advance(3_000);
    await turn();
    assertInstanceOf(a.lease?.signal.reason, LeaseLostError);
    assertEquals(logs.filter((line) => line.includes("not renewed in time")).length, 1);
    await manager.dispose();
  });

  await t.step("the stop margin comes off every local deadline", async () => {
    const { store, manager, waiters, clock } = setup(4, { stopMarginMs: 300 });
    const [w] = await waiters(1);
    store.renewOverride = () => never(); // no renewal ever comes back
    await clock.advance(2_699);
    await turn();
    assertEquals(w.lease?.signal.aborted, false);
    await clock.advance(1);
    await turn();
    assertInstanceOf(w.lease?.signal.reason, LeaseLostError); // at 0 + 3000 - 300
    await manager.dispose();
    // What a runtime takes off: a tenth of the lease, at most a second.
    assertEquals([2_000, 10_000, 60_000].map(stopMarginFor), [200, 1_000, 1_000]);
  });

  await t.step("leases the store reports lost are aborted at once", async () => {
    const { store, manager, waiters, clock } = setup(4);
    const [a, b] = await waiters(2);
    store.held.delete(a.lease!.fence); // reclaimed in the store
    await clock.advance(1_000);
    await turn();
    assertInstanceOf(a.lease?.signal.reason, LeaseLostError);
    assertEquals(b.lease?.signal.aborted, false);
    assertEquals(manager.held, 1);
    await manager.dispose();
  });
});

Deno.test("lease manager: releasing", async (t) => {
  await t.step("a freed lease goes to a local fork without a store call", async () => {
    const { store, manager, waiters } = setup(1);
    const [first, second] = await waiters(2);
    manager.release(first.lease!);
    assertEquals(second.lease?.fence, first.lease?.fence);
    await turn();
    assertEquals(store.ops("release"), []);
    await manager.dispose();
  });

  await t.step("a freed lease goes back to the store while others wait (S4)", async () => {
    const { store, manager, waiters } = setup(1);
    store.othersWaiting = 1;
    const [first, second] = await waiters(2);
    manager.release(first.lease!);
    await turn();
    assertEquals(store.ops("release").map((c) => c.arg), [[1]]);
    assertEquals(second.lease?.fence, 2); // and the local fork asks the store again
    await manager.dispose();
  });

  await t.step("another holder starting to wait sends idle and freed leases back", async () => {
    const { store, manager, waiters } = setup(3);
    const [a, b, c] = await waiters(3);
    manager.release(a.lease!);
    assertEquals(manager.idle, 1);
    store.notify({ kind: "wanted", holder: "me", share: 0 }); // its own notice changes nothing
    assertEquals(manager.idle, 1);
    store.notify({ kind: "wanted", holder: "other", share: 0 });
    assertEquals(manager.idle, 0);
    const d = new Waiter();
    manager.enqueue(d);
    manager.release(b.lease!); // not to the local fork: the fleet first
    await turn();
    assertEquals(store.ops("release").map((call) => call.arg), [[1, 2]]);
    assertEquals(c.lease?.signal.aborted, false);
    await manager.dispose();
  });

  await t.step(
    "an answer computed before a 'wanted' notice that already arrived does not undo it",
    async () => {
      // Pub/sub and replies come on different connections: the notice of a
      // holder that started waiting can overtake the answer to an acquire the
      // store ran before that holder waited (and which says nobody waits).
      const { store, manager } = setup(2);
      const answer = Promise.withResolvers<void>();
      let acquires = 0;
      store.acquireOverride = async () => {
        if (acquires++ > 0) return never(); // the third fork's acquire stays in flight
        await answer.promise;
        return { granted: [1, 2], othersWaiting: 0, earliestMs: -1, share: 2 };
      };
      const [a, b, c] = [new Waiter(), new Waiter(), new Waiter()];
      for (const waiter of [a, b]) manager.enqueue(waiter);
      await turn();
      store.notify({ kind: "wanted", holder: "other", share: 1 });
      answer.resolve();
      await turn();
      assertEquals([a.lease?.fence, b.lease?.fence], [1, 2]);
      manager.enqueue(c);
      manager.release(a.lease!); // above the share of 1 while another waits: to the fleet
      await turn();
      assertEquals(store.ops("release").map((call) => call.arg), [[1]]);
      assertEquals(b.lease?.signal.aborted, false);
      await manager.dispose();
    },
  );

  await t.step(
    "at its share, a freed lease goes to a local fork even while others wait",
    async () => {
      const { store, manager, waiters } = setup(1);
      store.othersWaiting = 1;
      store.share = 1;
      const [first, second] = await waiters(2);
      manager.release(first.lease!);
      assertEquals(second.lease?.fence, first.lease?.fence);
      await turn();
      assertEquals(store.ops("release"), []);
      manager.release(second.lease!); // no local fork left: back to the fleet, not idle
      await turn();
      assertEquals(store.ops("release").map((c) => c.arg), [[1]]);
      await manager.dispose();
    },
  );

  await t.step("an idle lease is kept a moment for tryTake, then returned", async () => {
    const { store, manager, waiters, clock } = setup(2, { idleKeepMs: 5 });
    const [a, b] = await waiters(2);
    manager.release(a.lease!);
    manager.release(b.lease!);
    assertEquals(manager.idle, 2);
    const taken = manager.tryTake();
    assertEquals(taken?.fence, 2);
    await clock.advance(5);
    await turn();
    assertEquals(store.ops("release").map((c) => c.arg), [[1]]); // one call for the idle one
    assertEquals(manager.tryTake(), undefined);
    await manager.dispose();
  });

  await t.step(
    "a lease granted after its fork withdrew idles a moment, then goes back",
    async () => {
      const { store, manager, clock } = setup(2, { idleKeepMs: 5 });
      let answer: () => void = () => {};
      store.acquireOverride = () =>
        new Promise((resolve) =>
          answer = () => resolve({ granted: [7], othersWaiting: 0, earliestMs: -1, share: 0 })
        );
      const w = new Waiter();
      manager.enqueue(w);
      await turn();
      assert(manager.withdraw(w));
      answer();
      await turn();
      assertEquals([manager.held, manager.idle], [1, 1]);
      await clock.advance(5);
      await turn();
      assertEquals(store.ops("release").map((c) => c.arg), [[7]]);
      assertEquals(manager.held, 0);
      await manager.dispose();
    },
  );

  await t.step("a lost lease in use goes back to the store when its process stops", async () => {
    const { store, manager, waiters, clock } = setup(1);
    store.renewOverride = () => never();
    const [w] = await waiters(1);
    await clock.advance(3_000);
    await turn();
    assert(w.lease?.signal.aborted);
    assertEquals(store.ops("release"), []); // the process may still run: its lease stays out
    manager.release(w.lease!);
    await turn();
    assertEquals(store.ops("release").map((c) => c.arg), [[1]]);
    await manager.dispose();
  });

  await t.step(
    "an acquire sent after its runtime's release answered is not followed by another",
    async () => {
      // The release's answer says capacity is free again: the acquire that
      // was waiting for it asks for that, so nothing is left to ask again.
      const { store, manager, waiters } = setup(1);
      store.othersWaiting = 1;
      const [first, second] = await waiters(2);
      const answer = Promise.withResolvers<void>();
      store.releaseOverride = async (call) => {
        await answer.promise;
        for (const fence of call.arg as number[]) store.held.delete(fence);
        return { released: 1, othersWaiting: 1, share: 0 };
      };
      manager.release(first.lease!); // back to the store: others wait
      const third = new Waiter();
      manager.enqueue(third); // its acquire waits for the release's answer
      await turn();
      answer.resolve();
      await turn();
      assertEquals(store.ops("acquire").map((c) => c.arg), [2, 2]);
      assertEquals([second.lease?.fence, third.lease], [2, undefined]);
      await manager.dispose();
    },
  );

  await t.step("releases of one turn go to the store in one call", async () => {
    const { store, manager, waiters } = setup(3);
    store.othersWaiting = 1;
    const ws = await waiters(3);
    for (const w of ws) manager.release(w.lease!);
    await turn();
    assertEquals(store.ops("release").map((c) => c.arg), [[1, 2, 3]]);
    await manager.dispose();
  });

  await t.step(
    "dispose refuses waiters, returns every lease, closes its subscription",
    async () => {
      const { store, manager, waiters } = setup(1);
      const [first, second] = await waiters(2);
      const reason = new Error("runtime disposed");
      await manager.dispose(reason);
      assertEquals(second.refused, reason);
      assertEquals(store.ops("release").map((c) => c.arg), [[first.lease!.fence]]);
      assertEquals(store.ops("wait").map((c) => c.arg), [0]);
      assertEquals([store.subscriptions, store.closedSubscriptions], [1, 1]);
    },
  );

  await t.step("dispose leaves nothing on the clock, even mid-subscribe", async () => {
    const { store, manager, clock } = setup(1);
    store.subscribeReady = () => never();
    manager.enqueue(new Waiter());
    await turn();
    assertEquals(clock.pending, 1); // the acquire waits a moment for the channel
    await manager.dispose();
    assertEquals(clock.pending, 0);
  });

  await t.step("dispose gives up on an unreachable store after a second (S6)", async () => {
    const { store, manager, waiters, clock } = setup(1);
    await waiters(1);
    store.releaseOverride = () => never();
    let done = false;
    const disposing = manager.dispose().then(() => done = true);
    await clock.advance(999);
    await turn();
    assertEquals(done, false);
    await clock.advance(1);
    await disposing;
  });
});

Deno.test("lease manager: by default, local deadlines ignore wall-clock steps", async () => {
  // Real time, short: the default clock is what is under test.
  const leaseMs = 60;
  const store = new FakeLeaseStore(
    { now: () => performance.now(), sleep: () => never() },
    1,
    leaseMs,
  );
  store.renewOverride = () => never(); // no renewal ever comes back
  const manager = new LeaseManager(store, { maxHeld: 1, renewEveryMs: 20 });
  const realNow = Date.now;
  try {
    const lease = await waitFor(manager).granted;
    // The host's wall clock is set back an hour: a Date.now() deadline would
    // now lie an hour away.
    const stepped = realNow() - 3_600_000;
    Date.now = () => stepped;
    await new Promise((resolve) => setTimeout(resolve, leaseMs * 3));
    assertInstanceOf(lease.signal.reason, LeaseLostError);
  } finally {
    Date.now = realNow;
    await manager.dispose();
  }
});

Deno.test("lease manager: a call left unanswered and then failed is one outage, one warning", async () => {
  // Real time, short: the watch on unanswered calls uses real timers.
  const store = new FakeLeaseStore(
    { now: () => performance.now(), sleep: () => never() },
    1,
    3_000,
  );
  const logs: string[] = [];
  let fail: (error: Error) => void = () => {};
  store.acquireOverride = () => new Promise((_, reject) => fail = reject);
  const manager = new LeaseManager(store, {
    maxHeld: 1,
    slowCallMs: 10,
    pollMinMs: 30_000,
    logger: { warn: (m) => logs.push(`warn: ${m}`), info: (m) => logs.push(`info: ${m}`) },
  });
  try {
    const waiting = waitFor(manager).granted;
    waiting.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 40));
    fail(new Error("the client gave up"));
    await new Promise((resolve) => setTimeout(resolve, 10));
    // The silence was the outage's warning; the client giving up is no answer.
    assertEquals(logs, [
      "warn: shared capacity: the store has not answered for {ms} ms; waiting forks keep waiting",
    ]);
  } finally {
    await manager.dispose();
  }
});
