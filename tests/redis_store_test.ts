// The lease script against a real redis-server: leases, renewals, releases,
// expiry and reclaim, fencing tokens, and the keys it leaves behind.
import { assert, assertEquals, assertGreater, assertRejects } from "@std/assert";
import { leaseScriptSha, redisKeys } from "../src/runtime/shared/redis_store.ts";
import type { Notice } from "../src/runtime/shared/lease_store.ts";
import { redisFixture, sleep, until } from "./_redis_fixture.ts";

function strictlyIncreasing(values: readonly number[]): boolean {
  return values.every((value, i) => i === 0 || value > values[i - 1]);
}

Deno.test("redis lease store: leases", async (t) => {
  await using fx = await redisFixture();

  await t.step("acquire grants up to the limit and records the rest as waiting", async () => {
    const store = fx.store({ limit: 3 });
    const a = await store.acquire("A", 2);
    assertEquals(a.granted.length, 2);
    assertEquals(a.othersWaiting, 0);
    const b = await store.acquire("B", 5);
    assertEquals(b.granted.length, 1);
    const [leases, , state] = redisKeys(store.key).keys;
    assertEquals(await fx.redis.zcard(leases), 3);
    assertEquals(await fx.redis.hget(state, "wB"), "4");
    assert(strictlyIncreasing([...a.granted, ...b.granted]));
  });

  await t.step("a batch larger than one ZADD chunk is granted in one call", async () => {
    const store = fx.store({ limit: 2_500 });
    const { granted } = await store.acquire("A", 2_500);
    assertEquals(granted.length, 2_500);
    assert(strictlyIncreasing(granted));
    assertEquals(await fx.redis.zcard(redisKeys(store.key).keys[0]), 2_500);
    assertEquals((await store.release("A", granted)).released, 2_500);
  });

  await t.step(
    "acquire reports the time to the earliest deadline, from Redis's clock",
    async () => {
      const store = fx.store({ limit: 2, leaseMs: 10_000 });
      const { earliestMs } = await store.acquire("A", 1);
      assert(earliestMs > 0 && earliestMs <= 10_000, `earliestMs ${earliestMs}`);
      assertEquals((await fx.store().acquire("A", 0)).earliestMs, -1);
    },
  );

  await t.step("renew extends every live lease of the holder and keeps its fence", async () => {
    const store = fx.store({ limit: 2, leaseMs: 10_000 });
    const { granted } = await store.acquire("A", 2);
    const leases = redisKeys(store.key).keys[0];
    const before = await fx.redis.zrange(leases, "0", "-1", "WITHSCORES");
    await sleep(5);
    const renewed = await store.renew("A", granted);
    assertEquals(renewed.lost, []);
    const after = await fx.redis.zrange(leases, "0", "-1", "WITHSCORES");
    assertEquals([after[0], after[2]], [before[0], before[2]]); // same members: same fences
    assertGreater(Number(after[1]), Number(before[1]));
    assertGreater(Number(after[3]), Number(before[3]));
  });

  await t.step("renew refuses leases of another holder and unknown fences", async () => {
    const store = fx.store({ limit: 2 });
    const { granted } = await store.acquire("A", 1);
    assertEquals((await store.renew("B", granted)).lost, granted);
    assertEquals((await store.renew("A", [granted[0] + 1])).lost, [granted[0] + 1]);
    assertEquals((await store.renew("A", granted)).lost, []);
  });

  await t.step(
    "expired leases are reclaimed by the next call; a late renewal revives nothing",
    async () => {
      const store = fx.store({ limit: 2, leaseMs: 20 });
      const { granted } = await store.acquire("A", 2);
      await sleep(40); // past the deadline on any clock
      assertEquals((await store.renew("A", granted)).lost, granted);
      const [leases, , state] = redisKeys(store.key).keys;
      assertEquals(await fx.redis.zcard(leases), 0);
      assertEquals(await fx.redis.hexists(state, "hA"), 0);
      assertEquals((await store.acquire("B", 2)).granted.length, 2);
    },
  );

  await t.step(
    "an expired lease goes to another holder even without a renewal attempt",
    async () => {
      const store = fx.store({ limit: 1, leaseMs: 20 });
      // Only what a busy machine cannot break: a 20 ms lease has surely expired after 40 ms.
      assertEquals((await store.acquire("A", 1)).granted.length, 1);
      await sleep(40);
      assertEquals((await store.acquire("B", 1)).granted.length, 1);
    },
  );

  await t.step("release gives back only the holder's own leases", async () => {
    const store = fx.store({ limit: 2 });
    const { granted } = await store.acquire("A", 2);
    assertEquals((await store.release("B", granted)).released, 0);
    assertEquals((await store.release("A", granted.slice(0, 1))).released, 1);
    assertEquals((await store.release("A", granted)).released, 1);
    assertEquals((await store.acquire("B", 2)).granted.length, 2);
  });

  await t.step("fencing tokens strictly increase across holders, batches and reclaim", async () => {
    const store = fx.store({ limit: 3, leaseMs: 20 });
    const tokens: number[] = [];
    for (const holder of ["A", "B", "A", "C"]) {
      const { granted } = await store.acquire(holder, 2);
      tokens.push(...granted);
      await store.release(holder, granted.slice(0, 1));
    }
    await sleep(40);
    const afterReclaim = (await store.acquire("D", 3)).granted;
    assertEquals(afterReclaim.length, 3);
    tokens.push(...afterReclaim);
    assert(strictlyIncreasing(tokens), `tokens ${tokens}`);
    assert(tokens.every(Number.isSafeInteger));
  });

  await t.step("fencing tokens keep increasing after a restart lost the counter", async () => {
    const store = fx.store({ limit: 2 });
    const before = (await store.acquire("A", 2)).granted;
    await fx.server.restart(); // no persistence: every key, the counter included, is gone
    const after = (await store.acquire("B", 2)).granted;
    assertEquals(after.length, 2);
    assertGreater(after[0], before[1]);
  });

  await t.step(
    "every view has a number, increasing call after call, on replies and notices alike",
    async () => {
      const store = fx.store({ limit: 1 });
      const heard: Notice[] = [];
      const subscriptions = ["A", "B"].map((holder) =>
        store.subscribe((notice) => heard.push(notice), holder)
      );
      try {
        await Promise.all(subscriptions.map((subscription) => subscription.ready));
        const seqs: number[] = [];
        const a = await store.acquire("A", 1);
        seqs.push(a.seq);
        const wait = await store.wait("B", 1, 7); // "wanted" to A, with this call's number
        seqs.push(wait.seq, (await store.renew("A", a.granted)).seq);
        const release = await store.release("A", a.granted); // handed to B: "granted"
        seqs.push(release.seq);
        await until(() => heard.length >= 2, 2_000, "the wanted and granted notices");
        // Two connections: the notices may come in either order.
        const wanted = heard.find((notice) => notice.kind === "wanted");
        const granted = heard.find((notice) => notice.kind === "granted");
        assertEquals(wanted?.kind === "wanted" && wanted.seq, wait.seq);
        assertEquals(granted?.kind === "granted" && granted.view?.seq, release.seq);
        // A stray DEL of the hash that keeps it, then a restart that loses
        // everything: the number goes on above, from Redis's clock.
        await fx.redis.del(redisKeys(store.key).keys[2]); // :state
        seqs.push((await store.wait("B", 1, 8)).seq);
        await fx.server.restart();
        seqs.push((await store.acquire("C", 1)).seq);
        assert(strictlyIncreasing(seqs), `seqs ${seqs}`);
        assert(seqs.every(Number.isSafeInteger));
      } finally {
        for (const subscription of subscriptions) await subscription.close();
      }
    },
  );

  await t.step("the script is loaded again when the server lost it (NOSCRIPT)", async () => {
    await fx.redis.script("FLUSH");
    assertEquals((await fx.store({ limit: 1 }).acquire("A", 1)).granted.length, 1);
  });

  await t.step("an unknown operation is refused and writes nothing", async () => {
    const store = fx.store({ limit: 1 });
    await store.acquire("A", 0); // the script is loaded; the key is empty again
    const { keys, channel } = redisKeys(store.key);
    const sha = await leaseScriptSha();
    await assertRejects(
      () =>
        fx.redis.evalsha(
          sha,
          keys.length,
          ...keys,
          "bogus",
          channel,
          "A",
          1,
          10_000,
        ),
      Error,
      "unknown op bogus",
    );
    assertEquals(await fx.redis.exists(...keys), 0); // no :state left behind without an expiry
  });

  await t.step("keys go when nothing is live, except the fence counter", async () => {
    const store = fx.store({ limit: 2 });
    const { keys } = redisKeys(store.key);
    const { granted } = await store.acquire("A", 3); // 2 leases and a wait for 1
    for (const key of keys.slice(0, 3)) assertGreater(await fx.redis.pttl(key), 10_000);
    assertEquals(await fx.redis.pttl(keys[3]), -1); // the fence counter never expires
    assertGreater(await fx.redis.pttl(keys[6]), 10_000); // the holders set
    await store.release("A", granted);
    assertEquals(await fx.redis.exists(...keys.slice(0, 3)), 2); // still waiting: waiters, state
    assertEquals(await fx.redis.exists(keys[6]), 0); // nobody holds
    await store.wait("A", 0);
    assertEquals(await fx.redis.exists(...keys.slice(0, 3)), 0);
    assertEquals(await fx.redis.exists(keys[3]), 1);
  });
});
