// The lease manager's side of a hand-over (a release elsewhere granted this
// runtime a lease inside the store), on virtual time against an in-memory
// store: the grant notice, its local deadline (S2), and notices that come
// late, twice, for someone else, or never.
import { assertEquals, assertInstanceOf } from "@std/assert";
import { LeaseLostError } from "../mod.ts";
import type { AcquireResult, Fence, ReleaseResult } from "../src/runtime/shared/lease_store.ts";
import { never } from "./_fake_lease_store.ts";
import { setup as managerSetup, turn, Waiter } from "./_lease_manager_setup.ts";

/**
 * Nothing free in the store (limit 0), leaseMs 3000, no polling in the way.
 * `slowCallMs` as a Runtime sets it: the store is then behind the watch on
 * unanswered calls (_watched_store.ts).
 */
function setup(start = 0, slowCallMs?: number) {
  const base = managerSetup(0, { pollMinMs: 60_000, pollMaxMs: 60_000, slowCallMs }, start);
  const grant = (
    fences: Fence[],
    tag: number,
    holder = "me",
    view?: { othersWaiting: number; share: number; seq: number },
  ) => base.store.notify({ kind: "granted", holder, fences, tag, view });
  return { ...base, grant };
}

Deno.test("lease manager: hand-over", async (t) => {
  await t.step(
    "a grant notice serves the first fork at once; its deadline counts from the tagged acquire",
    async () => {
      const { clock, store, manager, waiters, grant } = setup();
      const [first, second] = await waiters(2);
      const [acquire] = store.ops("acquire");
      assertEquals([acquire.at, acquire.tag], [0, 0]); // the tag is the send time
      store.renewOverride = () => never(); // the batch renewal never answers
      await clock.advance(500);
      grant([store.handOver()], acquire.tag!);
      assertEquals(first.lease?.fence, 1);
      assertEquals(second.lease, undefined);
      assertEquals(manager.held, 1);
      assertEquals(store.ops("acquire").length, 1); // no round trip of its own
      await clock.advance(2_499);
      await turn();
      assertEquals(first.lease?.signal.aborted, false);
      await clock.advance(1);
      await turn();
      // S2: lost at 0 + 3000 (the acquire's send time), not 500 + 3000 (the notice)
      assertInstanceOf(first.lease?.signal.reason, LeaseLostError);
      assertEquals(store.ops("renew").length > 0, true); // renewal was tried before
      await manager.dispose();
    },
  );

  await t.step("the send time tags the wait record through the watch a Runtime adds", async () => {
    // A Runtime's lease manager always watches its store for unanswered
    // calls; the watch once dropped the tag, so the store recorded 0 and every
    // hand-over counted its local deadline from the clock's origin.
    const { store, manager, waiters } = setup(5_000, 1_000);
    const [waiter] = await waiters(1);
    assertEquals(store.ops("acquire").map((call) => call.tag), [5_000]);
    manager.withdraw(waiter);
    await turn();
    assertEquals(store.ops("wait").map((call) => call.tag), [5_000]);
    await manager.dispose();
  });

  await t.step("a lease handed over near its deadline is renewed early", async () => {
    const { clock, store, manager, waiters, grant } = setup();
    await waiters(1);
    await clock.advance(2_500);
    grant([store.handOver()], 0); // 500 ms left: renew within 250, not the usual 1000
    await clock.advance(250);
    await turn();
    assertEquals(store.ops("renew").map((c) => [c.at, c.arg]), [[2_750, [1]]]);
    await manager.dispose();
  });

  await t.step(
    "a grant for a fork that withdrew meanwhile idles a moment, then goes back",
    async () => {
      const { clock, store, manager, waiters, grant } = setup();
      const [w] = await waiters(1);
      manager.withdraw(w);
      await turn();
      grant([store.handOver()], 0);
      assertEquals(w.lease, undefined);
      assertEquals([manager.held, manager.idle], [1, 1]);
      await clock.advance(5);
      await turn();
      assertEquals(store.ops("release").map((c) => c.arg), [[1]]);
      assertEquals(manager.held, 0);
      await manager.dispose();
    },
  );

  await t.step("a stale notice (local deadline passed) gives the lease back at once", async () => {
    const { clock, store, manager, waiters, grant } = setup();
    const [w] = await waiters(1);
    await clock.advance(3_000);
    grant([store.handOver()], 0);
    await turn();
    assertEquals(w.lease, undefined);
    assertEquals(manager.held, 0);
    assertEquals(store.ops("release").map((c) => c.arg), [[1]]);
    await manager.dispose();
  });

  await t.step("a notice twice, or for another holder, changes nothing", async () => {
    const { store, manager, waiters, grant } = setup();
    const [a, b] = await waiters(2);
    grant([store.handOver()], 0, "someone-else");
    assertEquals([a.lease, manager.held], [undefined, 0]);
    const fence = store.handOver();
    grant([fence], 0);
    grant([fence], 0);
    assertEquals([a.lease?.fence, b.lease, manager.held], [fence, undefined, 1]);
    await manager.dispose();
  });

  await t.step(
    "a lost notice: the next reply reports the lease, it goes back, the late notice is ignored",
    async () => {
      const { store, manager, waiters, grant } = setup();
      const [w] = await waiters(1);
      const fence = store.handOver();
      store.handed = [fence];
      manager.enqueue(new Waiter()); // more demand: another acquire, whose reply reports it
      await turn();
      await turn();
      assertEquals(store.ops("acquire")[1].arg, 2);
      assertEquals(store.ops("release").map((c) => c.arg), [[fence]]);
      assertEquals(store.held.has(fence), false);
      grant([fence], store.ops("acquire")[1].tag!); // the notice, late
      assertEquals([w.lease, manager.held], [undefined, 0]);
      await manager.dispose();
    },
  );

  await t.step(
    "a reply naming a lease it holds, runs lost, or gave back: nothing more",
    async () => {
      const { clock, store, manager, waiters, grant } = setup();
      const [w] = await waiters(1);
      const fence = store.handOver();
      grant([fence], 0);
      store.handed = [fence];
      await clock.advance(1_000); // the batch renewal's reply names it: held, so kept
      await turn();
      assertEquals(store.ops("release"), []);
      assertEquals(w.lease?.signal.aborted, false);
      assertEquals(manager.held, 1);
      await manager.dispose();
    },
  );

  await t.step(
    "a grant notice heard before its acquire's reply leaves no stale wait behind",
    async () => {
      // Notices and replies come on different connections: the hand-over for
      // the record an acquire wrote can overtake that acquire's reply. The
      // reply then describes a record that is gone; believing it, the manager
      // skipped the next fork's acquire and waited for its poll.
      const { store, manager, waiters, grant } = setup();
      store.othersWaiting = 1;
      const reply = Promise.withResolvers<AcquireResult>();
      store.acquireOverride = () => reply.promise;
      const [w] = await waiters(1);
      const [acquire] = store.ops("acquire");
      grant([store.handOver()], acquire.tag!);
      assertEquals(w.lease?.fence, 1);
      reply.resolve({
        granted: [],
        othersWaiting: 1,
        earliestMs: 1_000,
        share: 0,
        seq: store.nextSeq(),
      });
      await turn();
      store.acquireOverride = undefined;
      // Handed straight to the other waiter: nothing freed here.
      store.releaseOverride = () => ({
        released: 1,
        handedOver: 1,
        othersWaiting: 0,
        share: 0,
        seq: store.nextSeq(),
      });
      manager.release(w.lease!);
      await waiters(1);
      assertEquals(store.ops("release").map((c) => c.arg), [[1]]);
      assertEquals(store.ops("acquire").length, 2); // at once, not after the poll
      await manager.dispose();
    },
  );

  await t.step("an acquire waits for the release in flight before it", async () => {
    // In the store the acquire's script would run first, and the release's
    // hand-over notice would go out only after it.
    const { store, manager, waiters, grant } = setup();
    store.othersWaiting = 1;
    const [w] = await waiters(1);
    grant([store.handOver()], store.ops("acquire")[0].tag!);
    const reply = Promise.withResolvers<ReleaseResult>();
    store.releaseOverride = () => reply.promise;
    manager.release(w.lease!);
    await waiters(1);
    assertEquals([store.ops("release").length, store.ops("acquire").length], [1, 1]);
    reply.resolve({ released: 1, handedOver: 1, othersWaiting: 1, share: 0, seq: store.nextSeq() });
    await turn();
    assertEquals(store.ops("acquire").length, 2);
    await manager.dispose();
  });

  await t.step(
    "a lease handed over that nobody here wants clears the stale wait record",
    async () => {
      const { store, manager, waiters, grant } = setup();
      const [w] = await waiters(1);
      grant([store.handOver()], 0);
      assertEquals(w.lease?.fence, 1);
      assertEquals(store.ops("wait"), []);
      grant([store.handOver()], 0); // an acquire crossed a hand-over: the store still counts one
      await turn();
      assertEquals(store.ops("wait").map((c) => c.arg), [0]);
      assertEquals(manager.held, 2); // the spare one idles a moment, then goes back
      await manager.dispose();
    },
  );

  await t.step(
    "the fleet a grant notice describes counts: held while others wait, the lease goes back",
    async () => {
      // Holding nothing while it waited, this runtime heard no "wanted"
      // notice (those go to holders): the grant's view is its news.
      const { store, manager, waiters, grant } = setup();
      const [first, second] = await waiters(2); // the store's answer: nobody else waits
      grant([store.handOver()], store.ops("acquire")[0].tag!, "me", {
        othersWaiting: 1,
        share: 0,
        seq: store.nextSeq(),
      });
      assertEquals(first.lease?.fence, 1);
      manager.release(first.lease!); // not to the local fork: the fleet first (S4)
      await turn();
      assertEquals(store.ops("release").map((call) => call.arg), [[1]]);
      assertEquals(second.lease, undefined);
      await manager.dispose();
    },
  );
});
