// The lease manager's releases on virtual time, against an in-memory store:
// a freed lease to a local fork or back to the store (S4), idle leases,
// batched releases, lost leases in use, and dispose (S6).
import { assert, assertEquals } from "@std/assert";
import { never } from "./_fake_lease_store.ts";
import { setup, turn, Waiter } from "./_lease_manager_setup.ts";

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
    // its own notice changes nothing
    store.notify({ kind: "wanted", holder: "me", share: 0, seq: store.nextSeq() });
    assertEquals(manager.idle, 1);
    store.notify({ kind: "wanted", holder: "other", share: 0, seq: store.nextSeq() });
    assertEquals(manager.idle, 0);
    const d = new Waiter();
    manager.enqueue(d);
    manager.release(b.lease!); // not to the local fork: the fleet first
    await turn();
    // The idle one went at once, on the notice; the freed one after it, in its own call.
    assertEquals(store.ops("release").map((call) => call.arg), [[1], [2]]);
    assertEquals(c.lease?.signal.aborted, false);
    await manager.dispose();
  });

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
          answer = () =>
            resolve({
              granted: [7],
              othersWaiting: 0,
              earliestMs: -1,
              share: 0,
              seq: store.nextSeq(),
            })
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
        return { released: 1, othersWaiting: 1, share: 0, seq: store.nextSeq() };
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

  await t.step(
    "a release with none unanswered goes at once; those that follow in its turn, in one call",
    async () => {
      const { store, manager, waiters } = setup(3);
      store.othersWaiting = 1;
      const ws = await waiters(3);
      for (const w of ws) manager.release(w.lease!);
      // The first is with the store before this turn ends: another runtime's wait is shorter.
      assertEquals(store.ops("release").map((c) => c.arg), [[1]]);
      await turn();
      assertEquals(store.ops("release").map((c) => c.arg), [[1], [2, 3]]);
      await manager.dispose();
    },
  );

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
