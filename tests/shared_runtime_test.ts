// A Runtime with a shared capacity, in one OS process, against a real
// redis-server: two runtimes on one key keep the fleet bound, fencing tokens
// increase, a lost lease cancels its process with LeaseLostError (S2),
// withdrawn waits give their local slot back (S3), and dispose cancels a
// long process and returns its lease at once (S6). Stats, fences and S5 are
// in shared_capacity_runtime_test.ts.
import { assert, assertEquals, assertInstanceOf, assertRejects } from "@std/assert";
import { CapacityMismatchError, type LangL, LeaseLostError, Runtime } from "../mod.ts";
import { redisCapacity } from "../redis.ts";
import { redisKeys } from "../src/runtime/shared/redis_store.ts";
import {
  closeUnreachable,
  redisFixture,
  unreachableRedis,
  until,
  within,
} from "./_redis_fixture.ts";
import { recordingLogger } from "./_recording_logger.ts";

Deno.test("runtime with a shared capacity on redis", async (t) => {
  await using fx = await redisFixture();
  let keys = 0;
  const capacity = (limit: number, leaseMs = 10_000) =>
    redisCapacity({ redis: fx.redis, key: `runtime-${++keys}`, limit, leaseMs });

  await t.step("two runtimes on one key never run more than the limit together", async () => {
    const shared = capacity(3);
    await using a = new Runtime({ maxProcesses: 4, shared });
    await using b = new Runtime({ maxProcesses: 4, shared });
    let running = 0, peak = 0;
    const fences: number[] = [];
    const job = async (_: number, lang: LangL) => {
      fences.push(lang.fence!);
      peak = Math.max(peak, ++running);
      try {
        await lang.delay(2);
      } finally {
        running--;
      }
    };
    const items = Array.from({ length: 30 }, (_, i) => i);
    await within(
      Promise.all([
        a.runApp((app) => app.forkAll(items, job)),
        b.runApp((app) => app.forkAll(items, job)),
      ]),
      20_000,
      "both fleets' work",
    );
    assertEquals(fences.length, 60);
    assert(peak <= 3, `peak ${peak} above the limit 3`);
    assert(fences.every((fence) => Number.isSafeInteger(fence) && fence > 0));
  });

  await t.step(
    "a fork waiting for a lease is withdrawn by its signal and frees its slot",
    async () => {
      const shared = capacity(1);
      await using holder = new Runtime({ maxProcesses: 1, shared });
      await using waiter = new Runtime({ maxProcesses: 1, shared });
      const release = Promise.withResolvers<void>();
      const held = holder.runApp(async (app) => {
        await app.awaitResult(await app.forkProcess(() => release.promise));
      });
      await until(() => holder.stats().active === 1, 5_000, "the holder runs");
      await waiter.runApp(async (app) => {
        const controller = new AbortController();
        const waiting = app.forkProcess(() => "late", { signal: controller.signal });
        await until(() => waiter.stats().waiting === 1, 5_000, "the fork waits");
        assertEquals(waiter.stats().active, 0);
        controller.abort(new Error("no longer needed"));
        await assertRejects(() => waiting, Error, "no longer needed");
        assertEquals(waiter.stats().waiting, 0);
        // The local slot went back: a local-only check finds it free.
        assertEquals(waiter.stats().active, 0);
      });
      release.resolve();
      await held;
    },
  );

  await t.step(
    "a lease lost in the store cancels its process with LeaseLostError (S2)",
    async () => {
      const shared = capacity(1, 1_000);
      await using runtime = new Runtime({ maxProcesses: 1, shared });
      const names = redisKeys(shared.key);
      const error = await runtime.runApp(async (app) => {
        const handle = await app.forkProcess(async (lang) => {
          // Another client wipes the store's record: the next renewal learns the lease is gone.
          await fx.redis.del(...names.keys);
          await new Promise((_, reject) =>
            lang.signal.addEventListener("abort", () => reject(lang.signal.reason))
          );
        });
        return await app.awaitResult(handle).catch((e) => e);
      });
      assertInstanceOf(error, LeaseLostError);
      assertEquals(runtime.stats().cancelled, 1);
    },
  );

  await t.step(
    "forkAll treats a lost lease like a fork timeout: a cancellation, not a failure",
    async () => {
      const shared = capacity(2, 1_000);
      await using runtime = new Runtime({ maxProcesses: 2, shared });
      const outcome = await runtime.runApp((app) =>
        app.forkAll([1, 2], async (item, lang) => {
          if (item === 2) {
            await fx.redis.del(...redisKeys(shared.key).keys);
            await lang.delay(60_000);
          }
          return item;
        }).catch((error) => error)
      );
      assertInstanceOf(outcome, LeaseLostError);
      assertEquals(runtime.stats().failed, 0);
      assertEquals(runtime.stats().cancelled, 1);
    },
  );

  await t.step("a worker process sees its host process's fencing token", async () => {
    await using runtime = new Runtime({ maxProcesses: 1, shared: capacity(1), workers: 1 });
    const scripts = new URL("./workers/scripts.ts", import.meta.url);
    const [seen, local] = await runtime.runApp(async (app) => {
      const handle = await app.forkWorker(scripts, null, { export: "fence" });
      const seen = await app.awaitResult(handle);
      return [seen, await app.awaitResult(await app.forkProcess((lang) => lang.fence))];
    });
    assert(typeof seen === "number" && seen > 0, `fence ${seen}`);
    assert(typeof local === "number" && local >= (seen as number));
  });

  await t.step("under a start rate, starts keep the rate even when leases come late", async () => {
    const shared = capacity(4);
    await using holder = new Runtime({ maxProcesses: 4, shared });
    await using rated = new Runtime({
      maxProcesses: 4,
      shared,
      rate: { limit: 2, intervalMs: 100 },
    });
    const release = Promise.withResolvers<void>();
    const holding = holder.runApp((app) => app.forkAll([1, 2, 3, 4], () => release.promise));
    await until(() => holder.stats().active === 4, 5_000, "the holder takes every lease");
    const starts: number[] = [];
    const running = rated.runApp(async (app) => {
      const handles = await Promise.all(
        [1, 2, 3, 4].map(() => app.forkProcess(() => void starts.push(performance.now()))),
      );
      for (const handle of handles) await app.awaitResult(handle);
    });
    try {
      // Long enough for the rate's window to have room for every fork twice over.
      await new Promise((resolve) => setTimeout(resolve, 250));
      assertEquals(starts.length, 0);
      assertEquals(rated.stats().waiting, 4);
    } finally {
      release.resolve();
    }
    await Promise.all([holding, running]);
    assertEquals(starts.length, 4);
    // Timers may fire a little early relative to performance.now(): 5 ms of slack.
    for (let i = 2; i < starts.length; i++) {
      assert(starts[i] - starts[i - 2] >= 95, `starts ${starts.map((s) => s - starts[0])}`);
    }
  });

  await t.step(
    "a fork waiting for the rate with its lease gives both back when withdrawn",
    async () => {
      await using runtime = new Runtime({
        maxProcesses: 2,
        shared: capacity(2),
        rate: { limit: 1, intervalMs: 60_000 },
      });
      await runtime.runApp(async (app) => {
        await app.awaitResult(await app.forkProcess(() => 1));
        const controller = new AbortController();
        const waiting = app.forkProcess(() => 2, { signal: controller.signal });
        await until(
          () => runtime.stats().waitingForRate === 1,
          5_000,
          "the fork waits for the rate",
        );
        assertEquals(runtime.stats().shared?.held, 1);
        controller.abort(new Error("withdrawn"));
        await assertRejects(() => waiting, Error, "withdrawn");
        assertEquals(runtime.stats().waiting, 0);
        assertEquals(runtime.stats().active, 0);
      });
      // Nobody waits, so the lease idles for a few ms, then goes back to the store.
      await until(() => runtime.stats().shared?.held === 0, 5_000, "the lease goes back");
    },
  );

  await t.step(
    "a different limit on the same key rejects with CapacityMismatchError (S7)",
    async () => {
      const key = `runtime-${++keys}`;
      await using first = new Runtime({
        maxProcesses: 1,
        shared: redisCapacity({ redis: fx.redis, key, limit: 2 }),
      });
      await using second = new Runtime({
        maxProcesses: 1,
        shared: redisCapacity({ redis: fx.redis, key, limit: 3 }),
      });
      const release = Promise.withResolvers<void>();
      const running = first.runApp(async (app) => {
        await app.awaitResult(await app.forkProcess(() => release.promise));
      });
      await until(() => first.stats().active === 1, 5_000, "the first runtime holds a lease");
      await assertRejects(
        () => second.runApp(async (app) => app.awaitResult(await app.forkProcess(() => 1))),
        CapacityMismatchError,
      );
      release.resolve();
      await running;
    },
  );

  await t.step("dispose returns the leases and leaves the caller's client open (S6)", async () => {
    const shared = capacity(4);
    const runtime = new Runtime({ maxProcesses: 4, shared });
    const started = Promise.withResolvers<void>();
    const app = runtime.runApp(async (app) => {
      await app.forkProcess(async (lang) => {
        started.resolve();
        await lang.delay(60_000);
      });
    });
    await started.promise;
    assertEquals(await fx.redis.zcard(redisKeys(shared.key).keys[0]), 1);
    await within(runtime[Symbol.asyncDispose](), 2_000, "dispose");
    await app.catch(() => {});
    assertEquals(await fx.redis.zcard(redisKeys(shared.key).keys[0]), 0);
    assertEquals(await fx.redis.ping(), "PONG");
  });

  await t.step("`shared` must be made by redisCapacity", () => {
    let error: unknown;
    try {
      new Runtime({ maxProcesses: 1, shared: { key: "k", limit: 1 } });
    } catch (e) {
      error = e;
    }
    assertInstanceOf(error, TypeError);
    assert(String((error as Error).message).includes("redisCapacity"));
  });
});

Deno.test("shared capacity: a store whose calls hang in the client's offline queue is reported (S3)", async () => {
  // Calls neither succeed nor fail while ioredis reconnects: what a default
  // client does for over a minute when Redis is down.
  const redis = unreachableRedis({ maxRetriesPerRequest: null });
  const logger = recordingLogger();
  try {
    await using runtime = new Runtime({
      maxProcesses: 1,
      logger,
      shared: redisCapacity({ redis, key: "hanging", limit: 1, leaseMs: 1_000 }),
    });
    await runtime.runApp(async (app) => {
      const controller = new AbortController();
      const waiting = app.forkProcess(() => 1, { signal: controller.signal });
      await until(
        () =>
          logger.records.some((r) => r.level === "warning" && r.message.includes("not answered")),
        5_000,
        "the warning",
      );
      controller.abort(new Error("gave up"));
      await assertRejects(() => waiting, Error, "gave up");
    });
  } finally {
    await closeUnreachable(redis);
  }
  const warning = logger.records.find((r) => r.message.includes("not answered"))!;
  assertEquals(warning.properties.key, "hanging");
  assertEquals(warning.properties.ms, 333);
});
