// What one call of the lease script costs Redis does not grow with the number
// of runtimes on the key (review: every call read every holder's fields, so a
// renewal with 5 000 runtimes waiting took 19 ms of Redis's one thread).
// A hand-over reads only the waiters it may pick from.
// Counted, not timed: the commands the script runs, from INFO commandstats
// (which counts those a script calls), for the same calls with few runtimes
// on the key and with hundreds.
import { assertEquals } from "@std/assert";
import type { Redis } from "ioredis";
import type { RedisLeaseStore } from "../src/runtime/shared/redis_store.ts";
import { type RedisFixture, redisFixture } from "./_redis_fixture.ts";

const CROWD = 300;
/** Commands that read every field of a hash, or every member of a set. */
const WHOLE = ["hgetall", "hkeys", "hvals", "hscan"];

/** The commands `run` made Redis execute, by name, with how often (EVALSHA included). */
async function commandsOf(
  redis: Redis,
  run: () => Promise<unknown>,
): Promise<Record<string, number>> {
  await redis.call("CONFIG", "RESETSTAT");
  await run();
  const info = await redis.call("INFO", "commandstats") as string;
  const calls: Record<string, number> = {};
  for (const [, name, n] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (name !== "config" && name !== "info") calls[name] = Number(n);
  }
  return calls;
}

/** A key where `crowd` other runtimes wait for a lease (limit 2, both held by A). */
async function crowded(fx: RedisFixture, crowd: number) {
  const store = fx.store({ limit: 2, leaseMs: 60_000 });
  const { granted } = await store.acquire("A", 2);
  for (let i = 0; i < crowd; i += 100) {
    const part = Array.from({ length: Math.min(100, crowd - i) }, (_, j) => `W${i + j}`);
    await Promise.all(part.map((h) => store.wait(h, 1, 1)));
  }
  return { store, granted };
}

/** The same calls on a key with 2 other runtimes and on one with CROWD: the same commands. */
async function sameCost(
  fx: RedisFixture,
  setUp: (
    fx: RedisFixture,
    crowd: number,
  ) => Promise<{ store: RedisLeaseStore; granted: readonly number[] }>,
  calls: (store: RedisLeaseStore, granted: readonly number[]) => Promise<unknown>,
): Promise<void> {
  const few = await setUp(fx, 2);
  const many = await setUp(fx, CROWD);
  const alone = await commandsOf(fx.redis, () => calls(few.store, few.granted));
  const amid = await commandsOf(fx.redis, () => calls(many.store, many.granted));
  for (const name of WHOLE) assertEquals(amid[name], undefined, `${name} amid ${CROWD} runtimes`);
  assertEquals(amid, alone);
}

Deno.test("redis lease store: a call's cost does not grow with the runtimes on the key", async (t) => {
  await using fx = await redisFixture();

  await t.step("renewals, with hundreds of runtimes waiting", async () => {
    await sameCost(fx, crowded, async (store, granted) => {
      for (let i = 0; i < 20; i++) await store.renew("A", granted);
    });
  });

  await t.step("a waiting runtime refreshing its wait record", async () => {
    await sameCost(fx, async (fx, crowd) => {
      const key = await crowded(fx, crowd);
      await key.store.wait("B", 1, 1);
      return key;
    }, async (store) => {
      for (let i = 0; i < 20; i++) await store.wait("B", 1, 2);
    });
  });

  await t.step("an acquire that finds the leases taken and starts waiting", async () => {
    await sameCost(fx, crowded, (store) => store.acquire("B", 1, 1));
  });

  await t.step("a release that hands a lease over, with hundreds of runtimes waiting", async () => {
    await sameCost(fx, crowded, async (store, granted) => {
      assertEquals((await store.release("A", granted.slice(0, 1))).handedOver, 1);
    });
  });

  await t.step("a release nobody waits for, with hundreds of runtimes holding", async () => {
    await sameCost(fx, async (fx, crowd) => {
      const store = fx.store({ limit: crowd + 1, leaseMs: 60_000 });
      for (let i = 0; i < crowd; i += 100) {
        const part = Array.from({ length: Math.min(100, crowd - i) }, (_, j) => `H${i + j}`);
        await Promise.all(part.map((h) => store.acquire(h, 1)));
      }
      return { store, granted: (await store.acquire("A", 1)).granted };
    }, (store, granted) => store.release("A", granted));
  });
});

// The hand-off row of bench:fleet, at the store: runtimes of one lease each,
// limit 2, two holding and two waiting; the longest holder releases (its
// lease goes to the longest waiter) and starts waiting again. Each holder
// already knows that others wait and its share (0): a "wanted" notice would
// tell it nothing, and woke two runtimes per hand-over on a 2-core machine.
// A lease heard of by its "granted" notice and released leaves no record of
// the hand-over for the next call to check.
Deno.test("redis lease store: a hand-over and the releaser's next wait publish one notice", async () => {
  await using fx = await redisFixture();
  const store = fx.store({ limit: 2, leaseMs: 60_000 });
  const fences = new Map<string, number[]>();
  const order: string[] = [];
  let granted: (holder: string) => void = () => {};
  const subscriptions = ["A", "B", "C", "D"].map((h) =>
    store.subscribe((notice) => {
      if (notice.kind !== "granted") return;
      fences.set(h, [...notice.fences]);
      granted(h);
    }, h)
  );
  try {
    await Promise.all(subscriptions.map((s) => s.ready));
    for (const h of ["A", "B", "C", "D"]) {
      const { granted } = await store.acquire(h, 1);
      if (granted.length > 0) order.push(h);
      fences.set(h, [...granted]);
    }
    const handOff = async () => {
      const h = order.shift()!;
      const heard = new Promise<string>((resolve) => granted = resolve);
      assertEquals((await store.release(h, fences.get(h)!)).handedOver, 1);
      order.push(await heard);
      assertEquals((await store.acquire(h, 1)).granted, []);
    };
    await handOff(); // the first: the holders learn the share from it
    const calls = await commandsOf(fx.redis, async () => {
      for (let i = 0; i < 4; i++) await handOff();
    });
    assertEquals(calls.evalsha, 8);
    assertEquals(calls.publish, 4, "one grant notice per hand-over, no 'wanted'");
    assertEquals(calls.smembers, undefined, "nobody to tell: the holders set is not read");
    assertEquals(calls.zscore, undefined, "no hand-over left on record to check");
  } finally {
    await Promise.all(subscriptions.map((s) => s.close()));
  }
});
