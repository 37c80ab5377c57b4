// The lease script's view of the fleet, against a real redis-server: wait
// records, fair share (S4), the key's limit (S7) and release notices.
import { assertEquals, assertRejects } from "@std/assert";
import { CapacityMismatchError } from "../mod.ts";
import type { Notice } from "../src/runtime/shared/lease_store.ts";
import { redisKeys } from "../src/runtime/shared/redis_store.ts";
import { redisFixture, sleep, until, within } from "./_redis_fixture.ts";

Deno.test("redis lease store: the fleet", async (t) => {
  await using fx = await redisFixture();

  await t.step("wait records who waits for how many; 0 withdraws", async () => {
    const store = fx.store({ limit: 1 });
    const [, waiters, state] = redisKeys(store.key).keys;
    await store.acquire("A", 1);
    assertEquals((await store.wait("B", 3)).othersWaiting, 0); // A holds but waits for nothing
    assertEquals(await fx.redis.hget(state, "wB"), "3");
    assertEquals((await store.renew("A", [])).othersWaiting, 1);
    assertEquals((await store.wait("B", 2)).othersWaiting, 0); // B's own record does not count
    assertEquals(await fx.redis.hget(state, "wB"), "2");
    await store.wait("B", 0);
    assertEquals(await fx.redis.hexists(state, "wB"), 0);
    assertEquals(await fx.redis.zscore(waiters, "B"), null);
    assertEquals((await store.renew("A", [])).othersWaiting, 0);
  });

  await t.step("a granted acquire clears its wait record", async () => {
    const store = fx.store({ limit: 2 });
    await store.acquire("A", 1);
    await store.wait("B", 1);
    assertEquals((await store.acquire("B", 1)).granted.length, 1);
    assertEquals(await fx.redis.hexists(redisKeys(store.key).keys[2], "wB"), 0);
  });

  await t.step("a wait record nobody refreshes expires", async () => {
    // The record lives leaseMs. Only what a busy machine cannot break: a 20 ms
    // record is surely gone after 40 ms (its presence is checked above).
    const store = fx.store({ limit: 1, leaseMs: 20 });
    await store.wait("B", 2);
    await sleep(40);
    assertEquals((await store.wait("A", 0)).othersWaiting, 0);
    assertEquals(await fx.redis.hexists(redisKeys(store.key).keys[2], "wB"), 0);
  });

  await t.step(
    "fair share: while others wait, a holder at its share gets no new lease",
    async () => {
      const store = fx.store({ limit: 4 });
      const a = await store.acquire("A", 4);
      assertEquals(a.granted.length, 4); // nobody else wants any: A may take everything
      assertEquals((await store.acquire("B", 2)).granted.length, 0);
      assertEquals((await store.release("A", a.granted.slice(0, 2))).handedOver, 2); // to B
      const b = (await store.wait("B", 2)).handed!; // B wants two more
      assertEquals(b.length, 2);
      assertEquals((await store.release("B", b.slice(0, 1))).handedOver, 0); // A does not wait
      // A holds 2 of 4 with B waiting: A is at its share and gets none of the freed one.
      assertEquals((await store.acquire("A", 2)).granted.length, 0);
      assertEquals((await store.acquire("B", 2)).granted.length, 1);
    },
  );

  await t.step("fair share rounds up, so no capacity stays idle", async () => {
    const store = fx.store({ limit: 8 });
    const a = await store.acquire("A", 8);
    assertEquals((await store.acquire("B", 8)).granted.length, 0);
    assertEquals((await store.acquire("C", 8)).granted.length, 0);
    const state = redisKeys(store.key).keys[2];
    const heldBy = async () => [await fx.redis.hget(state, "hB"), await fx.redis.hget(state, "hC")];
    // A keeps 2; B and C each want 8. 3 holders take part: a share is ceil(8/3) = 3.
    assertEquals((await store.release("A", a.granted.slice(2))).handedOver, 6);
    assertEquals(await heldBy(), ["3", "3"]); // 2 + 3 + 3: all 8 in use
    // A leaves: 2 take part, 4 each.
    assertEquals((await store.release("A", a.granted.slice(0, 2))).handedOver, 2);
    assertEquals(await heldBy(), ["4", "4"]);
  });

  await t.step(
    "a different limit on a live key is refused (S7), then accepted once idle",
    async () => {
      const key = "mismatch";
      const first = fx.store({ key, limit: 3 });
      const second = fx.store({ key, limit: 5 });
      const { granted } = await first.acquire("A", 1);
      const error = await assertRejects(() => second.acquire("B", 1), CapacityMismatchError);
      assertEquals([error.key, error.limit, error.storedLimit], [key, 5, 3]);
      await assertRejects(() => second.wait("B", 1), CapacityMismatchError);
      await first.release("A", granted);
      assertEquals((await second.acquire("B", 5)).granted.length, 5);
      await assertRejects(() => first.acquire("A", 1), CapacityMismatchError);
    },
  );

  await t.step(
    "a waiter refused for an older version on the key leaves no wait record behind",
    async () => {
      const key = "older-layout-waiter";
      const store = fx.store({ key, limit: 2 });
      const [, waiters, state] = redisKeys(key).keys;
      const { granted } = await store.acquire("X", 2);
      assertEquals((await store.acquire("A", 1, 1)).granted, []); // A waits
      const olderMeta = `procpool:{${key}}:meta`;
      await fx.redis.hset(olderMeta, "limit", "2"); // an older runtime arrives
      const error = await assertRejects(() => store.acquire("A", 1, 2), CapacityMismatchError);
      assertEquals(error.storedLimit, 2);
      await fx.redis.del(olderMeta);
      // A's runtime withdraws nothing after a refusal: the record must be gone already.
      assertEquals(await fx.redis.hget(state, "wA"), null);
      assertEquals(await fx.redis.zscore(waiters, "A"), null);
      assertEquals((await store.renew("X", granted)).othersWaiting, 0);
    },
  );

  await t.step(
    "every answer carries the share: limit / holders taking part, rounded down",
    async () => {
      const store = fx.store({ limit: 8 });
      const a = await store.acquire("A", 8);
      assertEquals(a.share, 8);
      assertEquals((await store.acquire("B", 1)).share, 4);
      assertEquals((await store.wait("C", 1)).share, 2);
      assertEquals((await store.renew("A", a.granted)).share, 2);
      assertEquals((await store.release("A", a.granted)).share, 2); // A still counts while it asks
    },
  );

  await t.step("a waiter alone keeps the limit remembered", async () => {
    const key = "mismatch-waiter";
    await fx.store({ key, limit: 1 }).wait("A", 1);
    await assertRejects(() => fx.store({ key, limit: 2 }).acquire("B", 1), CapacityMismatchError);
  });

  await t.step("notices: a holder starting to wait, a release while others wait", async () => {
    const store = fx.store({ limit: 4 });
    const label = (notice: Notice) => {
      if (notice.kind === "wanted") return `wanted ${notice.holder} ${notice.share}`;
      if (notice.kind !== "granted") return notice.kind;
      const { othersWaiting, share } = notice.view ?? {};
      return `granted ${notice.holder} ${notice.fences.length} ${othersWaiting} ${share}`;
    };
    // "wanted" goes to the runtimes holding leases, a grant to its holder
    // alone, each on its own channel; "released" to every runtime on the key.
    const heardByA: string[] = [], heardByC: string[] = [];
    let granted: () => void = () => {};
    const a = store.subscribe((notice) => heardByA.push(label(notice)), "A");
    const c = store.subscribe((notice) => {
      heardByC.push(label(notice));
      if (notice.kind === "granted") granted();
    }, "C");
    try {
      await Promise.all([a.ready, c.ready]);
      const first = await store.acquire("A", 2);
      await store.release("A", first.granted.slice(0, 1)); // nobody waits: no notice
      const [a3] = (await store.acquire("A", 1)).granted;
      assertEquals((await store.acquire("B", 3)).granted.length, 2); // "wanted B 2" (4 / 2) to A
      await store.acquire("B", 1); // still waiting: no second notice
      await store.wait("B", 2); // nor when it wants more
      // B holds its share (ceil(4 / 2)): the freed lease is not handed over, "released".
      const freed = await store.release("A", first.granted);
      assertEquals([freed.released, freed.handedOver, freed.othersWaiting], [1, 0, 1]);
      await store.wait("C", 1); // "wanted C 1" (4 / 3) to A and B, not to C, which holds none
      // A's last lease goes straight to C, "granted C 1", and nothing is announced; with
      // it, what C heard of no "wanted": B waits, and C's share now that A takes no part (4 / 2).
      const notice = new Promise<void>((resolve) => granted = resolve);
      const last = await store.release("A", [a3]);
      assertEquals([last.released, last.handedOver, last.othersWaiting], [1, 1, 1]);
      await within(notice, 5_000, "grant notice");
      // Each connection delivers in publish order: once both hear a "released"
      // published after all that, nothing else can still be on its way to them.
      await fx.redis.publish(redisKeys(store.key).channel, "sentinel");
      const heardLast = (heard: string[]) => heard.length > 0 && heard.at(-1) === "released";
      await until(() => heardLast(heardByA) && heardLast(heardByC), 5_000, "the sentinel");
      assertEquals(heardByC, ["released", "granted C 1 1 2", "released"]);
      assertEquals(heardByA, ["wanted B 2", "released", "wanted C 1", "released"]);
    } finally {
      await a.close();
      await c.close();
    }
  });

  await t.step(
    "every holder is told of each new waiter, even with another waiting and the share unchanged",
    async () => {
      // A skipped notice (the call's share equal to the one before it, another
      // holder already waiting) left h with a share a grant had since lowered,
      // told to nobody: h kept 2 of 6 among 5 holders until its next renewal.
      const store = fx.store({ limit: 6 });
      const heard: string[] = [];
      const subscription = store.subscribe((notice) => {
        heard.push(
          notice.kind === "wanted" ? `wanted ${notice.holder} ${notice.share}` : notice.kind,
        );
      }, "h");
      try {
        await subscription.ready;
        assertEquals((await store.acquire("h", 2)).granted.length, 2);
        const j = (await store.acquire("J", 2)).granted;
        assertEquals((await store.acquire("W", 3)).granted.length, 2); // waits: share 6 / 3
        // W is at its cap (ceil(6 / 3)): J's lease is not handed over, but freed.
        assertEquals((await store.release("J", [j[0]])).handedOver, 0);
        assertEquals((await store.acquire("G", 1)).granted.length, 1); // share now 6 / 4, untold
        assertEquals((await store.acquire("X", 1)).granted, []); // waits: share 6 / 5
        await fx.redis.publish(redisKeys(store.key).channel, "sentinel");
        await until(() => heard.at(-1) === "released" && heard.length > 2, 5_000, "the sentinel");
        assertEquals(heard, ["wanted W 2", "released", "wanted X 1", "released"]);
      } finally {
        await subscription.close();
      }
    },
  );
});
