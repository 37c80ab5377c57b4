// Lease managers against a real redis-server: waking through pub/sub, dispose,
// and a partition through the blackholing proxy. Real time here is bounded by
// generous limits only; no assertion depends on how fast the machine is.
import { assert, assertEquals, assertInstanceOf } from "@std/assert";
import { Redis } from "ioredis";
import { LeaseLostError } from "../mod.ts";
import { LeaseManager, type LeaseManagerOptions } from "../src/runtime/shared/lease_manager.ts";
import { redisKeys, RedisLeaseStore } from "../src/runtime/shared/redis_store.ts";
import { BlackholeProxy } from "./_blackhole_proxy.ts";
import { waitFor } from "./_lease_waiter.ts";
import {
  closeUnreachable,
  redisFixture,
  unreachableRedis,
  until,
  within,
} from "./_redis_fixture.ts";

/** Polling slow enough that only a release notice (or a deadline) can explain a prompt wake. */
const NO_POLLING: Partial<LeaseManagerOptions> = { pollMinMs: 30_000, pollMaxMs: 30_000 };

async function clientCount(redis: Redis): Promise<number> {
  return String(await redis.call("CLIENT", "LIST")).trim().split("\n").length;
}

Deno.test("lease manager on redis", async (t) => {
  await using fx = await redisFixture();
  let keys = 0;
  const store = (client: Redis, leaseMs = 10_000, limit = 1) =>
    new RedisLeaseStore(client, { key: `manager-${++keys}`, limit, leaseMs });

  await t.step("a release in one runtime wakes a waiting one through pub/sub", async () => {
    const s = store(fx.redis);
    const a = new LeaseManager(s, { maxHeld: 4, ...NO_POLLING });
    const b = new LeaseManager(s, { maxHeld: 4, ...NO_POLLING });
    try {
      const held = await within(waitFor(a).granted, 5_000, "first lease");
      const waiting = waitFor(b);
      // b registered as waiting once the store says so.
      await until(
        async () => await fx.redis.hget(redisKeys(s.key).keys[2], `w${b.holder}`) !== null,
        5_000,
        "wait record",
      );
      a.release(held);
      const lease = await within(waiting.granted, 5_000, "release notice");
      assert(lease.fence > held.fence);
    } finally {
      await a.dispose();
      await b.dispose();
    }
  });

  await t.step(
    "dispose returns leases and closes its own connection, not the caller's",
    async () => {
      const s = store(fx.redis, 10_000, 3);
      const before = await clientCount(fx.redis);
      const manager = new LeaseManager(s, { maxHeld: 4 });
      await within(
        Promise.all([waitFor(manager), waitFor(manager)].map((w) => w.granted)),
        5_000,
        "leases",
      );
      assertEquals(await clientCount(fx.redis), before + 1); // its pub/sub connection
      await manager.dispose();
      assertEquals(await fx.redis.zcard(redisKeys(s.key).keys[0]), 0);
      // The server may list a client for a moment after its QUIT.
      await until(
        async () => await clientCount(fx.redis) === before,
        5_000,
        "connection closed",
      );
      assertEquals(await fx.redis.ping(), "PONG");
    },
  );

  await t.step(
    "a store unreachable from the start: forks wait, dispose still returns",
    async () => {
      const dead = unreachableRedis();
      const warnings: string[] = [];
      const manager = new LeaseManager(
        new RedisLeaseStore(dead, { key: "dead", limit: 1, leaseMs: 1_000 }),
        {
          maxHeld: 1,
          pollMinMs: 20,
          logger: { warn: (m) => warnings.push(m), info: () => {} },
        },
      );
      try {
        const waiter = waitFor(manager);
        let settled = false;
        waiter.granted.then(() => settled = true, () => settled = true);
        await until(() => warnings.length > 0, 10_000, "a warning");
        assertEquals(settled, false);
        assertEquals(manager.waiting, 1);
        const started = performance.now();
        await manager.dispose(new Error("disposed"));
        assert(performance.now() - started < 3_000, "dispose gave up in time");
        await waiter.granted.catch(() => {});
      } finally {
        await closeUnreachable(dead);
      }
    },
  );

  await t.step("a runtime cut off loses its lease locally before another gets it", async () => {
    await using proxy = new BlackholeProxy(fx.server.port);
    const far = new Redis({ host: "127.0.0.1", port: proxy.port, lazyConnect: true });
    far.on("error", () => {});
    await far.connect();
    const key = `manager-${++keys}`;
    const leaseMs = 1_000;
    const cutOff = new LeaseManager(new RedisLeaseStore(far, { key, limit: 1, leaseMs }), {
      maxHeld: 1,
    });
    const other = new LeaseManager(new RedisLeaseStore(fx.redis, { key, limit: 1, leaseMs }), {
      maxHeld: 1,
    });
    try {
      const held = await within(waitFor(cutOff).granted, 5_000, "first lease");
      const waiting = waitFor(other);
      proxy.cut();
      let lostAt = 0;
      held.signal.addEventListener("abort", () => lostAt = performance.now());
      const lease = await within(waiting.granted, 10_000, "lease after expiry");
      const grantedAt = performance.now();
      assertInstanceOf(held.signal.reason, LeaseLostError);
      assert(lostAt > 0 && lostAt <= grantedAt, "the holder stopped before the lease moved");
      proxy.heal(); // the held bytes arrive: the stale renewal revives nothing
      cutOff.release(held);
      other.release(lease);
      const again = await within(waitFor(cutOff).granted, 10_000, "lease after heal");
      assert(again.fence > lease.fence);
    } finally {
      proxy.heal();
      await cutOff.dispose();
      await other.dispose();
      await far.quit().catch(() => {});
      far.disconnect();
    }
  });
});
