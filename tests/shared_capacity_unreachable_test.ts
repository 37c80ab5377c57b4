// A store unreachable from the start, two ways: nothing listens on the port
// (connections refused), or a blackholing proxy that accepts connections and
// then forwards nothing (commands never answered). Forks wait without
// starting; `options.signal` and scope cancellation withdraw them, and a
// warning is logged (S3); and dispose returns within a second, closing what
// procpool opened (S6).
import { assert, assertEquals, assertInstanceOf, assertRejects } from "@std/assert";
import { Redis } from "ioredis";
import { Runtime, ScopeClosedError } from "../mod.ts";
import { redisCapacity } from "../redis.ts";
import { BlackholeProxy } from "./_blackhole_proxy.ts";
import {
  closeUnreachable,
  redisFixture,
  sleep,
  unreachableRedis,
  until,
  within,
} from "./_redis_fixture.ts";
import { recordingLogger } from "./_recording_logger.ts";
import { Holds, storeKeys } from "./_shared_capacity.ts";

/** S6: dispose gives up on an unreachable store after 1 s; this much more for a busy machine. */
const DISPOSE_SLACK_MS = 300;
/** Long enough for a fork to have asked the store (and failed, or hung) a few times. */
const TRYING_MS = 300;

/** What a runtime does with a store it cannot reach; `redis` is the caller's client. */
async function unreachable(redis: Redis): Promise<void> {
  const logger = recordingLogger();
  const runtime = new Runtime({
    maxProcesses: 2,
    shared: redisCapacity({ redis, key: "unreachable", limit: 2, leaseMs: 2_000 }),
    logger,
  });
  const holds = new Holds();
  let checked!: () => void;
  const allChecked = new Promise<void>((resolve) => checked = resolve);
  const run = runtime.runApp(async (app) => {
    // options.signal withdraws a fork waiting for a lease, with its reason.
    const controller = new AbortController();
    const withdrawn = app.forkProcess(holds.process, { signal: controller.signal });
    await sleep(TRYING_MS);
    assertEquals(runtime.stats().waiting, 1);
    assertEquals(runtime.stats().shared?.held, 0);
    const reason = new Error("not needed any more");
    controller.abort(reason);
    const rejection = await withdrawn.then(() => undefined, (error) => error);
    assertEquals(rejection, reason);
    assertEquals(runtime.stats().waiting, 0);

    // A cancelled scope withdraws its forks with ScopeClosedError.
    let inScope: unknown;
    await assertRejects(
      () =>
        app.scope(async (inner) => {
          inner.forkProcess(holds.process).catch((error) => inScope = error);
          await sleep(TRYING_MS);
          assertEquals(runtime.stats().waiting, 1);
          throw new Error("the scope gives up");
        }),
      Error,
      "the scope gives up",
    );
    assertInstanceOf(inScope, ScopeClosedError);
    assertEquals(runtime.stats().waiting, 0);

    // A fork still waiting when the runtime is disposed; meanwhile the
    // runtime has said that the store does not answer (S3).
    const last = app.forkProcess(holds.process);
    last.catch(() => {}); // rejected by the dispose below, or by a failed check
    await until(
      () => logger.records.some((record) => record.level === "warning"),
      15_000,
      "a warning",
    );
    checked();
    return await last;
  });
  try {
    // The app's checks passed (or one failed, and `run` says which).
    await Promise.race([allChecked, run]);
    const started = performance.now();
    await runtime[Symbol.asyncDispose]();
    const took = performance.now() - started;
    if (Deno.env.get("FLEET_REPORT") !== undefined) console.log({ disposeMs: took });
    assert(took <= 1_000 + DISPOSE_SLACK_MS, `dispose took ${took} ms`);
    await assertRejects(() => run);
    assertEquals(holds.started, 0, "a process started without a lease");
    assertEquals(runtime.stats().started, 0);
  } finally {
    await runtime[Symbol.asyncDispose]();
    await run.catch(() => {});
  }
}

Deno.test("shared capacity: a store unreachable from the start", async (t) => {
  await t.step("nothing listens on the port", async () => {
    const redis = unreachableRedis();
    try {
      await unreachable(redis);
    } finally {
      await closeUnreachable(redis);
    }
  });

  await t.step("connections accepted, nothing answered", async () => {
    await using fx = await redisFixture();
    await using proxy = new BlackholeProxy(fx.server.port);
    proxy.cut({ discard: true });
    const redis = new Redis({ host: "127.0.0.1", port: proxy.port, lazyConnect: true });
    redis.on("error", () => {});
    try {
      await unreachable(redis);
    } finally {
      redis.disconnect();
    }
  });
});

Deno.test("shared capacity: holding leases when the store goes away, dispose gives up within a second", async () => {
  await using fx = await redisFixture();
  await using proxy = new BlackholeProxy(fx.server.port);
  const redis = new Redis({ host: "127.0.0.1", port: proxy.port, lazyConnect: true });
  redis.on("error", () => {});
  await redis.connect();
  const key = "gone";
  const runtime = new Runtime({
    maxProcesses: 2,
    shared: redisCapacity({ redis, key, limit: 2, leaseMs: 2_000 }),
  });
  const holds = new Holds();
  const run = runtime.runApp((app) => app.forkAll([1, 2], (_, lang) => holds.process(lang)));
  try {
    await until(() => holds.running === 2, 15_000, "two holds");
    proxy.cut({ discard: true }); // its releases and its QUIT vanish
    const started = performance.now();
    await runtime[Symbol.asyncDispose]();
    const took = performance.now() - started;
    if (Deno.env.get("FLEET_REPORT") !== undefined) console.log({ disposeMs: took });
    assert(took <= 1_000 + DISPOSE_SLACK_MS, `dispose took ${took} ms`);
    assertEquals(holds.running, 0);
    await assertRejects(() => run);
    // Nobody could give the leases back: they stay until they expire in the store.
    assertEquals(await fx.redis.zcard(storeKeys(key).leases), 2);
  } finally {
    await runtime[Symbol.asyncDispose]();
    await run.catch(() => {});
    redis.disconnect();
  }
});

/** A fork waits on a store not reachable yet, and runs once `reach()` makes it reachable. */
async function reachedLate(redis: Redis, reach: () => void | Promise<void>): Promise<void> {
  const runtime = new Runtime({
    maxProcesses: 1,
    shared: redisCapacity({ redis, key: "late", limit: 1, leaseMs: 2_000 }),
  });
  try {
    const fence = await runtime.runApp(async (app) => {
      const waiting = app.forkProcess((lang) => lang.fence);
      await sleep(2 * TRYING_MS);
      assertEquals(runtime.stats().waiting, 1);
      await reach();
      return await app.awaitResult(await within(waiting, 15_000, "the fork"));
    });
    assert(typeof fence === "number" && fence > 0, `fence ${fence}`);
  } finally {
    await runtime[Symbol.asyncDispose]();
  }
}

Deno.test("shared capacity: a store reachable only later: the waiting fork runs then", async (t) => {
  await using fx = await redisFixture();

  await t.step("the link comes back", async () => {
    await using proxy = new BlackholeProxy(fx.server.port);
    proxy.cut(); // held, not dropped: delivered on heal, as TCP would once the link is back
    const redis = new Redis({ host: "127.0.0.1", port: proxy.port, lazyConnect: true });
    redis.on("error", () => {});
    try {
      await reachedLate(redis, () => proxy.heal());
    } finally {
      redis.disconnect();
    }
  });

  await t.step("the server starts", async () => {
    await fx.server.kill();
    const redis = new Redis({
      host: "127.0.0.1",
      port: fx.server.port,
      lazyConnect: true,
      disconnectTimeout: 20, // see above
      retryStrategy: () => 20,
    });
    redis.on("error", () => {});
    try {
      await reachedLate(redis, () => fx.server.restart());
    } finally {
      await redis.quit().catch(() => {});
      redis.disconnect();
    }
  });
});
