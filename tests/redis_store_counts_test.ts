// The lease script's counts and their repair against a real redis-server: the
// state hash's counts ('#nheld', '#nwant', '#nboth') stand in for every
// holder's fields, so they must stay exact; a key of the store lost on its own
// (an eviction, a stray DEL) is repaired by the next call, the leases and the
// wait records being the truth (_lease_script_repair.ts).
import { assertEquals, assertRejects } from "@std/assert";
import { CapacityMismatchError } from "../src/errors.ts";
import { redisKeys } from "../src/runtime/shared/redis_store.ts";
import type { Notice } from "../src/runtime/shared/lease_store.ts";
import { redisFixture, until } from "./_redis_fixture.ts";

Deno.test("redis lease store: counts, and keys lost on their own", async (t) => {
  await using fx = await redisFixture();

  /** meta's counts, and how many 'h' and 'w' fields there are. */
  async function countsOf(state: string): Promise<Record<string, string>> {
    const hash = await fx.redis.hgetall(state);
    const count = (c: string) => Object.keys(hash).filter((f) => f[0] === c).length;
    return {
      nheld: hash["#nheld"],
      nwant: hash["#nwant"],
      nboth: hash["#nboth"],
      fields: `${count("h")}/${count("w")}`,
    };
  }

  await t.step(
    "the bound counts the leases themselves: a lost state hash grants nothing more",
    async () => {
      // What an eviction policy other than noeviction, or a stray DEL, can do.
      const store = fx.store({ limit: 2 });
      const { keys } = redisKeys(store.key);
      const { granted } = await store.acquire("A", 2);
      assertEquals(granted.length, 2);
      await fx.redis.del(keys[2]); // :state, with the held counts
      assertEquals((await store.acquire("B", 2)).granted, []);
      assertEquals(await fx.redis.zcard(keys[0]), 2);
      // A's leases have no count now; giving them back leaves the counts exact.
      assertEquals((await store.release("A", granted)).handedOver, 2);
      assertEquals(await countsOf(keys[2]), { nheld: "1", nwant: "0", nboth: "0", fields: "1/0" });
    },
  );

  await t.step("a state hash without its counts has them counted from its fields", async () => {
    // What the version before the counts left on a key (one version per key).
    const store = fx.store({ limit: 2 });
    const { keys } = redisKeys(store.key);
    await store.acquire("A", 1);
    await store.acquire("B", 2, 1); // holds 1, waits for 1
    await store.acquire("C", 1, 2); // waits for 1
    await fx.redis.hdel(keys[2], "#nheld", "#nwant", "#nboth");
    await store.renew("A", []);
    assertEquals(await countsOf(keys[2]), { nheld: "2", nwant: "2", nboth: "1", fields: "2/2" });
  });

  await t.step("counts that cannot be right are counted again from the fields", async () => {
    // What the layout before the counts, running at once on the key, can leave:
    // its reclaims change the fields without the counts (review: '#nheld' -1,
    // then a share of INT64_MIN and a deleted state hash).
    const store = fx.store({ limit: 2 });
    const { keys } = redisKeys(store.key);
    await store.acquire("A", 1);
    await store.acquire("B", 2, 1); // holds 1, waits for 1
    for (const wrong of [{ "#nheld": "-1" }, { "#nwant": "-2" }, { "#nboth": "2" }]) {
      await fx.redis.hset(keys[2], wrong);
      const { share } = await store.renew("A", []);
      assertEquals(share, 1); // A and B take part
      assertEquals(await countsOf(keys[2]), { nheld: "2", nwant: "1", nboth: "1", fields: "2/1" });
    }
  });

  await t.step("a reclaim of thousands of wait records deletes their fields in parts", async () => {
    // 9 000 lapsed wait records, seeded as the script writes them: their
    // reclaim deletes 18 000 fields, past what Lua's unpack takes at once.
    const store = fx.store({ limit: 1 });
    const { keys } = redisKeys(store.key);
    const [leases, waiters, state] = keys;
    const [seconds] = await fx.redis.time();
    const past = Number(seconds) * 1000 - 1_000;
    const fields: Record<string, string> = {
      "#limit": "1",
      "#due": String(past),
      "#nheld": "0",
      "#nwant": "9000",
      "#nboth": "0",
    };
    const members: (string | number)[] = [];
    for (let i = 0; i < 9_000; i++) {
      fields[`wW${i}`] = "1";
      fields[`tW${i}`] = "1";
      members.push(past, `W${i}`);
    }
    await fx.redis.hset(state, fields);
    await fx.redis.zadd(waiters, ...members);
    assertEquals((await store.acquire("A", 1)).granted.length, 1);
    assertEquals(await fx.redis.zcard(waiters), 0);
    assertEquals(await fx.redis.zcard(leases), 1);
    assertEquals(await countsOf(state), { nheld: "1", nwant: "0", nboth: "0", fields: "1/0" });
  });

  await t.step(
    "a lost leases set leaves no holder counted: shares and grants as without them",
    async () => {
      // Alone, and with the holders set gone too (then the names come from the state hash).
      for (const lost of [[0], [0, 6]]) {
        const store = fx.store({ limit: 4 });
        const { keys } = redisKeys(store.key);
        await store.acquire("A", 2);
        await store.acquire("B", 2);
        await store.acquire("C", 2, 1); // waits for 2
        await store.acquire("D", 2, 2); // waits for 2
        await fx.redis.del(...lost.map((i) => keys[i]));
        // C and D take part, A and B no longer: an equal share is 2 (1 with them counted).
        const c = await store.acquire("C", 2, 3);
        assertEquals([c.granted.length, c.share], [2, 2], `lost ${lost}`);
        assertEquals(await countsOf(keys[2]), {
          nheld: "1",
          nwant: "1",
          nboth: "0",
          fields: "1/1",
        });
        assertEquals(await fx.redis.smembers(keys[6]), ["C"]);
      }
    },
  );

  await t.step("a lost waiters set leaves no waiter counted", async () => {
    const store = fx.store({ limit: 1 });
    const { keys } = redisKeys(store.key);
    const { granted } = await store.acquire("A", 1);
    await store.acquire("B", 1, 1); // waits
    await fx.redis.del(keys[1]);
    // B's wait record is gone: nobody waits, nothing is handed over, and nothing is left.
    const released = await store.release("A", granted);
    assertEquals([released.othersWaiting, released.handedOver], [0, 0]);
    assertEquals(await fx.redis.exists(keys[2], keys[6]), 0);
  });

  /** Whether `holder` hears that `waiter` started waiting, once `wait` has run. */
  async function hearsWanted(
    store: ReturnType<typeof fx.store>,
    holder: string,
    waiter: string,
    wait: () => Promise<unknown>,
  ): Promise<void> {
    const heard: Notice[] = [];
    const subscription = store.subscribe((notice) => heard.push(notice), holder);
    try {
      await subscription.ready;
      await wait();
      const wanted = () => heard.some((n) => n.kind === "wanted" && n.holder === waiter);
      await until(wanted, 2_000, `${holder} hears that ${waiter} waits`);
    } finally {
      await subscription.close();
    }
  }

  await t.step(
    "a lost state hash: live leases are counted again, and their holders hear a new waiter",
    async () => {
      const store = fx.store({ limit: 2 });
      const { keys } = redisKeys(store.key);
      await store.acquire("A", 2);
      await fx.redis.del(keys[2]);
      await hearsWanted(store, "A", "B", () => store.acquire("B", 1, 1));
      assertEquals(await countsOf(keys[2]), { nheld: "1", nwant: "1", nboth: "0", fields: "1/1" });
    },
  );

  await t.step(
    "a lost state hash keeps the key's limit (S7): its holders' names carry it",
    async () => {
      for (const live of ["lease", "wait record"]) {
        const two = fx.store({ limit: 2 });
        const three = fx.store({ key: two.key, limit: 3 });
        const { keys } = redisKeys(two.key);
        const a = two.newHolder();
        if (live === "lease") assertEquals((await two.acquire(a, 1)).granted.length, 1);
        else await two.wait(a, 1);
        await fx.redis.del(keys[2]); // :state, with '#limit'
        for (const call of [() => three.acquire(three.newHolder(), 1), () => three.wait("x", 1)]) {
          const error = await assertRejects(call, CapacityMismatchError, undefined, live);
          assertEquals([error.limit, error.storedLimit], [3, 2], live);
        }
        assertEquals(await fx.redis.zcard(keys[0]), live === "lease" ? 1 : 0, live);
        // The same limit still works, and the state hash has the limit again.
        await two.wait(two.newHolder(), 1);
        assertEquals(await fx.redis.hget(keys[2], "#limit"), "2", live);
      }
    },
  );

  await t.step(
    "a lost holders set is made again from the leases: holders hear a new waiter",
    async () => {
      const store = fx.store({ limit: 2 });
      const { keys } = redisKeys(store.key);
      await store.acquire("A", 1);
      await store.acquire("B", 1);
      await fx.redis.del(keys[6]);
      await hearsWanted(store, "A", "C", () => store.wait("C", 1, 1));
      assertEquals((await fx.redis.smembers(keys[6])).sort(), ["A", "B"]);
      assertEquals(await countsOf(keys[2]), { nheld: "2", nwant: "1", nboth: "0", fields: "2/1" });
    },
  );
  await t.step(
    "an older version's leases are not taken in as holders while its keys live",
    async () => {
      // Review: the repair counted an older runtime's leases as its holder's
      // on the very call it refused, and that count outlived the leases the
      // older runtime then dropped with its own script.
      const store = fx.store({ limit: 4 });
      const { keys } = redisKeys(store.key);
      const [leases, , state, , olderMeta, olderHeld, holders] = keys;
      const [seconds] = await fx.redis.time();
      const later = (Number(seconds) + 600) * 1000;
      await fx.redis.zadd(leases, later, "1:O", later, "2:O");
      await fx.redis.hset(olderHeld, "O", "2");
      await fx.redis.hset(olderMeta, "limit", "4");
      await assertRejects(() => store.acquire("N", 1), CapacityMismatchError);
      assertEquals(await fx.redis.hget(state, "hO"), null);
      assertEquals(await fx.redis.smembers(holders), []);
      // O drops one lease with its own script (no state hash), then its keys go.
      await fx.redis.zrem(leases, "1:O");
      await fx.redis.del(olderHeld, olderMeta);
      assertEquals((await store.acquire("N", 1)).granted.length, 1);
      // Its last lease is counted once, as the repair finds it now.
      assertEquals(await fx.redis.hget(state, "hO"), "1");
      assertEquals((await fx.redis.smembers(holders)).sort(), ["N", "O"]);
    },
  );
});
