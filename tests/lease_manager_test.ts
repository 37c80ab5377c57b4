// The lease manager's logic on virtual time, against an in-memory store:
// batching, renewal from the send time, loss and waking. Releasing, hand-off
// and idling are in lease_manager_release_test.ts.
import { assert, assertEquals, assertInstanceOf } from "@std/assert";
import { CapacityMismatchError, LeaseLostError } from "../mod.ts";
import { LeaseManager } from "../src/runtime/shared/lease_manager.ts";
import { FakeLeaseStore, never } from "./_fake_lease_store.ts";
import { waitFor } from "./_lease_waiter.ts";
import { stopMarginFor } from "../src/runtime/shared/shared_slot_pool.ts";
import { setup, turn } from "./_lease_manager_setup.ts";

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
          answer = () =>
            resolve({ lost: [], othersWaiting: 0, earliestMs: -1, share: 0, seq: store.nextSeq() })
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
