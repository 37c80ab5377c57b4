// How the lease manager orders what it hears of the fleet (S4): replies and
// notices come on different connections, in no set order between them, and
// each carries the number of the store call that computed its view
// (ShareView.seq). Only a newer view counts. Virtual time, in-memory store.
import { assertEquals } from "@std/assert";
import { LatestView, STALE_VIEW_WINDOW_MS } from "../src/runtime/shared/_latest_view.ts";
import { never } from "./_fake_lease_store.ts";
import { setup, turn, Waiter } from "./_lease_manager_setup.ts";

/** No polling in the way: only the calls a test makes happen. */
const quiet = { pollMinMs: 60_000, pollMaxMs: 60_000 };

Deno.test("lease manager: views of the fleet in the order the store computed them", async (t) => {
  await t.step(
    "an answer computed before a 'wanted' notice that already arrived does not undo it",
    async () => {
      // The notice of a holder that started waiting can overtake the answer
      // to an acquire the store ran before that holder waited (and which
      // says nobody waits).
      const { store, manager } = setup(2);
      const answer = Promise.withResolvers<void>();
      let acquires = 0;
      store.acquireOverride = async () => {
        if (acquires++ > 0) return never(); // the third fork's acquire stays in flight
        const seq = store.nextSeq(); // the store ran it before the other holder waited
        await answer.promise;
        return { granted: [1, 2], othersWaiting: 0, earliestMs: -1, share: 2, seq };
      };
      const [a, b, c] = [new Waiter(), new Waiter(), new Waiter()];
      for (const waiter of [a, b]) manager.enqueue(waiter);
      await turn();
      store.notify({ kind: "wanted", holder: "other", share: 1, seq: store.nextSeq() });
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
    "a grant notice computed before an answer already heard does not undo that answer",
    async () => {
      // A release elsewhere hands this runtime a lease while another holder
      // waits; that holder leaves; then this runtime's renewal runs, reports
      // the lease it has not heard of (it goes back) and that nobody waits.
      // The grant notice, delayed on the pub/sub connection, comes last: its
      // view (someone waits, share 1) is older than the renewal's.
      const { clock, store, manager, waiters } = setup(2, quiet);
      const [a, , c] = await waiters(3); // two leases, one fork waiting
      const handed = store.handOver();
      const grant = {
        kind: "granted",
        holder: "me",
        fences: [handed],
        tag: store.ops("acquire")[0].tag!,
        view: { othersWaiting: 1, share: 1, seq: store.nextSeq() },
      } as const;
      store.handed = [handed];
      await clock.advance(1_000); // the renewal: nobody waits now
      await turn();
      assertEquals(store.ops("renew").length, 1);
      assertEquals(store.ops("release").map((call) => call.arg), [[handed]]); // unheard of
      store.notify(grant);
      manager.release(a.lease!); // nobody else waits: to the local fork, no store call
      await turn();
      assertEquals(c.lease?.fence, a.lease?.fence);
      assertEquals(store.ops("release").map((call) => call.arg), [[handed]]);
      await manager.dispose();
    },
  );

  await t.step("a 'wanted' notice counts only if it is newer than the last answer", async () => {
    const { store, manager, waiters } = setup(1, quiet);
    const stale = store.nextSeq(); // computed before the acquire ran
    const [a, b] = await waiters(2);
    store.notify({ kind: "wanted", holder: "other", share: 0, seq: stale });
    manager.release(a.lease!); // the acquire's answer, newer, said nobody waits
    assertEquals(b.lease?.fence, 1);
    store.notify({ kind: "wanted", holder: "other", share: 0, seq: store.nextSeq() });
    await waiters(1);
    manager.release(b.lease!); // another holder waits now: to the fleet first (S4)
    await turn();
    assertEquals(store.ops("release").map((call) => call.arg), [[1]]);
    await manager.dispose();
  });
});

Deno.test("LatestView: the newest view wins; a count that went back blinds it for one window at most", () => {
  let now = 0;
  const view = new LatestView(() => now);
  assertEquals(view.apply({ othersWaiting: 2, share: 1, seq: 5_000_000 }), true);
  assertEquals(view.apply({ othersWaiting: 0, share: 4, seq: 4_999_999 }), false);
  assertEquals(view.apply({ othersWaiting: 0, share: 4, seq: 5_000_000 }), false);
  assertEquals(view.wanted(0, 4_000_000), false);
  assertEquals([view.othersWaiting, view.share], [2, 1]);
  now = 10;
  assertEquals(view.apply({ othersWaiting: 0, share: 4, seq: 5_000_001 }), true);
  assertEquals(view.wanted(2, 5_000_002), true); // a waiter, not a count: at least one
  assertEquals([view.othersWaiting, view.share], [1, 2]);
  // The store's count went back far (Redis's clock stepped back, a replica
  // behind took over): refused within the window after the last view applied,
  // however far back; taken once the window has passed, then ordered from it.
  now = 10 + STALE_VIEW_WINDOW_MS - 1;
  assertEquals(view.apply({ othersWaiting: 3, share: 1, seq: 1_000 }), false);
  assertEquals([view.othersWaiting, view.share], [1, 2]);
  now = 10 + STALE_VIEW_WINDOW_MS;
  assertEquals(view.apply({ othersWaiting: 3, share: 1, seq: 2_000 }), true);
  assertEquals([view.othersWaiting, view.share], [3, 1]);
  assertEquals(view.apply({ othersWaiting: 0, share: 4, seq: 1_999 }), false);
  assertEquals(view.apply({ othersWaiting: 0, share: 4, seq: 2_001 }), true);
  assertEquals([view.othersWaiting, view.share], [0, 4]);
});
