// A Runtime with a shared capacity on a real redis-server, through the public
// API: stats().shared and lang.fence (S8), tryForkProcess only with a held
// idle lease (S5), dispose returning leases and closing procpool's own
// connection but not the caller's (S6), a limit mismatch (S7), and clients
// of ioredis 5.x and 6.x on one key.
import { assert, assertEquals, assertInstanceOf, assertRejects } from "@std/assert";
import { CapacityMismatchError, Runtime } from "../mod.ts";
import { Redis as Redis5 } from "ioredis5";
import { redisCapacity } from "../redis.ts";
import { maxConcurrent } from "./_fleet_harness.ts";
import { redisFixture, until, within } from "./_redis_fixture.ts";
import { clientCount, Holds, storeKeys, waitingRuntimes } from "./_shared_capacity.ts";

const SLOW_MS = 15_000;

Deno.test("shared capacity on a Runtime", async (t) => {
  await using fx = await redisFixture();
  const shared = (key: string, limit: number) =>
    redisCapacity({ redis: fx.redis, key, limit, leaseMs: 2_000 });

  await t.step("stats().shared and lang.fence", async () => {
    await using plain = new Runtime({ maxProcesses: 1 });
    assertEquals(plain.stats().shared, undefined);
    assertEquals(await plain.runApp((app) => app.evalLang((lang) => lang.fence)), undefined);
    const forkedFence = await plain.runApp(async (app) =>
      app.awaitResult(await app.forkProcess((lang) => lang.fence))
    );
    assertEquals(forkedFence, undefined);
    await using runtime = new Runtime({ maxProcesses: 3, shared: shared("stats", 2) });
    assertEquals(runtime.stats().shared, { key: "stats", limit: 2, held: 0 });
    const holds = new Holds();
    const run = runtime.runApp((app) => app.forkAll([1, 2, 3], (_, lang) => holds.process(lang)));
    await until(() => holds.running === 2, SLOW_MS, "two holds");
    assertEquals(runtime.stats().shared, { key: "stats", limit: 2, held: 2 });
    assertEquals(runtime.stats().active, 2);
    const [a, b] = holds.fences;
    assert(Number.isSafeInteger(a) && Number.isSafeInteger(b) && a !== b, `fences ${a}, ${b}`);
    holds.release();
    assertEquals((await run).length, 3);
  });

  await t.step("S5: tryForkProcess only with a local slot and a held idle lease", async () => {
    await using runtime = new Runtime({ maxProcesses: 2, shared: shared("try", 2) });
    await runtime.runApp(async (app) => {
      // Nothing held yet: no handle, although a local slot is free, and no waiting.
      assertEquals(app.tryForkProcess(() => 1), undefined);
      assertEquals(runtime.stats().waiting, 0);
      const holds = new Holds();
      const first = await app.forkProcess(holds.process);
      assertEquals(runtime.stats().shared?.held, 1);
      // Its one lease is busy: still no handle.
      assertEquals(app.tryForkProcess(() => 1), undefined);
      holds.release();
      await app.awaitResult(first);
      // The process has stopped and its slot is free (rule 1); its lease is
      // kept a moment for a local fork, since nobody else waits.
      assertEquals(runtime.stats().shared?.held, 1);
      const second = app.tryForkProcess((lang) => lang.fence);
      if (second === undefined) throw new Error("no handle while a held lease is idle");
      assertEquals(await app.awaitResult(second), holds.fences[0]);
      // The idle lease goes back to the store soon: no handle then.
      await until(() => runtime.stats().shared?.held === 0, SLOW_MS, "the idle lease returned");
      assertEquals(app.tryForkProcess(() => 1), undefined);
    });
  });

  await t.step("S6: dispose returns the leases and closes procpool's connections", async () => {
    const key = "dispose";
    const before = await clientCount(fx.redis);
    const runtime = new Runtime({ maxProcesses: 3, shared: shared(key, 3) });
    const holds = new Holds();
    const run = runtime.runApp((app) => app.forkAll([1, 2, 3], (_, lang) => holds.process(lang)));
    try {
      await until(() => holds.running === 3, SLOW_MS, "three holds");
      assertEquals(await fx.redis.zcard(storeKeys(key).leases), 3);
      assert(await clientCount(fx.redis) > before, "procpool's own connection");
    } finally {
      await within(runtime[Symbol.asyncDispose](), SLOW_MS, "dispose");
    }
    // Its processes were cancelled (not lost) and have stopped.
    assertEquals(holds.running, 0);
    for (const record of holds.records) assert(record.reason !== undefined, "cancelled");
    await assertRejects(() => run);
    // Every lease is back, and the store kept nothing for this runtime.
    const { leases, waiters, state } = storeKeys(key);
    assertEquals(await fx.redis.exists(leases, waiters, state), 0);
    assertEquals(runtime.stats().shared?.held, 0);
    // procpool's connection is gone (the server may list it a moment after
    // its QUIT); the caller's client is open and works.
    await until(async () => await clientCount(fx.redis) === before, SLOW_MS, "its connection");
    assertEquals(fx.redis.status, "ready");
    assertEquals(await fx.redis.ping(), "PONG");
    await runtime[Symbol.asyncDispose](); // idempotent
  });

  await t.step("S6: runtimes disposed right after their work leave no lease behind", async () => {
    // Regression: an acquire in flight at dispose left a wait record the
    // runtime did not know of; a release by the other runtime then handed
    // that disposed runtime a lease nobody returned (it held until expiry),
    // in about 1 round in 4.
    for (let round = 0; round < 20; round++) {
      const key = `dispose-race-${round}`;
      const capacity = shared(key, 4);
      const runtimes = [
        new Runtime({ maxProcesses: 4, shared: capacity }),
        new Runtime({ maxProcesses: 4, shared: capacity }),
      ];
      const holds = runtimes.map(() => new Holds());
      const runs = runtimes.map((runtime, i) =>
        runtime.runApp((app) => app.forkAll([1, 2, 3, 4], (_, lang) => holds[i].process(lang)))
      );
      try {
        await until(() => holds[0].running + holds[1].running === 4, SLOW_MS, "the limit held");
        for (const h of holds) h.release();
        await Promise.all(runs);
      } finally {
        for (const h of holds) h.release();
        await Promise.allSettled(runs);
        for (const runtime of runtimes) await runtime[Symbol.asyncDispose]();
      }
      assertEquals(await fx.redis.zrange(storeKeys(key).leases, "0", "-1"), [], `round ${round}`);
    }
  });

  await t.step("an ioredis 5.x client and a 6.x one share a key", async () => {
    const key = "five";
    const five = new Redis5({ host: "127.0.0.1", port: fx.server.port, lazyConnect: true });
    five.on("error", () => {});
    await five.connect();
    try {
      const before = await clientCount(fx.redis);
      const onFive = new Runtime({
        maxProcesses: 2,
        shared: redisCapacity({ redis: five, key, limit: 2, leaseMs: 2_000 }),
      });
      const onSix = new Runtime({ maxProcesses: 2, shared: shared(key, 2) });
      const six = new Holds(), fiveHolds = new Holds();
      try {
        // The 6.x runtime holds the limit; the 5.x one waits, then gets the leases.
        const first = onSix.runApp((app) => app.forkAll([1, 2], (_, lang) => six.process(lang)));
        await until(() => six.running === 2, SLOW_MS, "the 6.x runtime holds the limit");
        const second = onFive.runApp((app) =>
          app.forkAll([1, 2], (_, lang) => fiveHolds.process(lang))
        );
        await until(async () => await waitingRuntimes(fx.redis, key) === 1, SLOW_MS, "it waits");
        assertEquals(fiveHolds.started, 0);
        six.release();
        await within(first, SLOW_MS, "the 6.x runtime's processes");
        await until(() => fiveHolds.running === 2, SLOW_MS, "the 5.x runtime takes over");
        assertEquals(await clientCount(fx.redis), before + 2, "a connection of each runtime's own");
        fiveHolds.release();
        assertEquals(
          await within(second, SLOW_MS, "the 5.x runtime's processes"),
          fiveHolds.fences,
        );
        const all = [...six.intervals, ...fiveHolds.intervals];
        assert(maxConcurrent(all) <= 2, `saw ${maxConcurrent(all)}`);
        assert(Math.min(...fiveHolds.fences) > Math.max(...six.fences), "fences increase");
      } finally {
        six.release();
        fiveHolds.release();
        await onFive[Symbol.asyncDispose]();
        await onSix[Symbol.asyncDispose]();
      }
      // Each runtime closed the connection it made with duplicate(); both callers' stay open.
      await until(async () => await clientCount(fx.redis) === before, SLOW_MS, "closed");
      assertEquals(await five.ping(), "PONG");
    } finally {
      await five.quit().catch(() => {});
      five.disconnect();
    }
  });

  await t.step("S7: a runtime with another limit on the same key is refused", async () => {
    const key = "mismatch";
    await using first = new Runtime({ maxProcesses: 1, shared: shared(key, 2) });
    await using second = new Runtime({ maxProcesses: 1, shared: shared(key, 3) });
    const holds = new Holds();
    const run = first.runApp((app) => app.forkAll([1], (_, lang) => holds.process(lang)));
    await until(() => holds.running === 1, SLOW_MS, "the first runtime holds");
    const refused = await second.runApp(async (app) => {
      const error = await app.forkProcess(() => 1).then(() => undefined, (e) => e);
      return { error, stats: second.stats() };
    });
    assertInstanceOf(refused.error, CapacityMismatchError);
    for (const word of [key, "2", "3"]) {
      assert(refused.error.message.includes(word), `${refused.error.message} names ${word}`);
    }
    assertEquals(refused.stats.active, 0);
    assertEquals(refused.stats.waiting, 0);
    holds.release();
    await run;
    // Nothing live on the key any more: the store forgot the first limit.
    await first[Symbol.asyncDispose]();
    assertEquals(await second.runApp((app) => app.forkAll([1], () => 7)), [7]);
  });

  await t.step(
    "S7 across versions: while an older procpool's keys are on the key, forks are refused",
    async () => {
      // Versions before the state hash keep their counts in ':held' and the
      // limit in ':meta'; a fleet mixing them with this one would not keep
      // the bound, so this one refuses as for a different limit.
      const key = "older-version";
      const olderMeta = `procpool:{${key}}:meta`;
      await fx.redis.hset(olderMeta, "limit", "5");
      await using runtime = new Runtime({ maxProcesses: 2, shared: shared(key, 2) });
      const refused = await runtime.runApp(async (app) =>
        await app.forkProcess(() => 1).then(() => undefined, (e) => e)
      );
      assertInstanceOf(refused, CapacityMismatchError);
      assertEquals(refused.storedLimit, 5);
      for (const word of [key, "older procpool version", "their limit 5", "new key"]) {
        assert(refused.message.includes(word), `${refused.message} names ${word}`);
      }
      assertEquals(runtime.stats().active, 0);
      await fx.redis.del(olderMeta); // the older runtimes gone: their keys expire
      assertEquals(await runtime.runApp((app) => app.forkAll([1], () => 7)), [7]);
    },
  );
});
