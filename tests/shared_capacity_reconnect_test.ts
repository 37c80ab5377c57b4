// procpool's own pub/sub connection across reconnects (Redis restarted, a
// connection reset): it subscribes again once it is back, and
// disposing a runtime while the resubscription is still unanswered leaves no
// unhandled rejection (ioredis's own resubscription had none handling it,
// which ends a Deno program).
import { assertEquals } from "@std/assert";
import { Redis } from "ioredis";
import { Runtime } from "../mod.ts";
import { redisCapacity } from "../redis.ts";
import { BlackholeProxy } from "./_blackhole_proxy.ts";
import { wallMs } from "./_fleet_harness.ts";
import { redisFixture, sleep, until } from "./_redis_fixture.ts";
import { redisKeys } from "../src/runtime/shared/redis_store.ts";
import { Holds, waitingRuntimes } from "./_shared_capacity.ts";

const SLOW_MS = 15_000;

/** A client through `proxy` that reconnects quickly. */
async function throughProxy(proxy: BlackholeProxy): Promise<Redis> {
  const redis = new Redis({
    host: "127.0.0.1",
    port: proxy.port,
    lazyConnect: true,
    retryStrategy: () => 20,
  });
  redis.on("error", () => {});
  await redis.connect();
  return redis;
}

Deno.test("shared capacity: procpool's pub/sub connection across reconnects", async (t) => {
  await using fx = await redisFixture();

  await t.step("dispose while its resubscription is unanswered", async () => {
    await using proxy = new BlackholeProxy(fx.server.port);
    const redis = await throughProxy(proxy);
    const runtime = new Runtime({
      maxProcesses: 1,
      shared: redisCapacity({ redis, key: "resubscribe", limit: 1, leaseMs: 2_000 }),
    });
    try {
      await runtime.runApp((app) => app.forkAll([1], () => 1)); // subscribed by now
      // The connections reset; once back, the SUBSCRIBE (and all after it) vanishes.
      proxy.cutBefore = (text) => text.toLowerCase().includes("subscribe");
      proxy.dropConnections();
      await until(() => proxy.isCut, SLOW_MS, "the resubscription");
      await runtime[Symbol.asyncDispose]();
      await sleep(20); // an unhandled rejection would surface here, failing the test
    } finally {
      await runtime[Symbol.asyncDispose]();
      redis.disconnect();
    }
  });

  await t.step(
    "after a reconnect, it subscribes again and the waiting runtime is woken",
    async () => {
      await using proxy = new BlackholeProxy(fx.server.port);
      const redis = await throughProxy(proxy);
      const key = "renotice", limit = 1, leaseMs = 10_000;
      const holder = new Runtime({
        maxProcesses: 1,
        shared: redisCapacity({ redis: fx.redis, key, limit, leaseMs }),
      });
      const waiter = new Runtime({
        maxProcesses: 1,
        shared: redisCapacity({ redis, key, limit, leaseMs }),
      });
      const held = new Holds(), woken = new Holds();
      woken.release();
      const runs: Promise<unknown>[] = [];
      try {
        runs.push(holder.runApp((app) => app.forkAll([1], (_, lang) => held.process(lang))));
        await until(() => held.running === 1, SLOW_MS, "the holder runs");
        runs.push(waiter.runApp((app) => app.forkAll([1], (_, lang) => woken.process(lang))));
        await until(async () => await waitingRuntimes(fx.redis, key) === 1, SLOW_MS, "it waits");
        const channel = redisKeys(key).channel;
        const subscribers = async () =>
          Number((await fx.redis.call("PUBSUB", "NUMSUB", channel) as [string, number])[1]);
        assertEquals(await subscribers(), 2);
        const accepted = proxy.accepted;
        proxy.dropConnections();
        // The waiting runtime's two connections come back, one subscribed again.
        await until(() => proxy.accepted === accepted + 2, SLOW_MS, "reconnected");
        await until(async () => await subscribers() === 2, SLOW_MS, "subscribed again");
        const releasedAt = wallMs();
        held.release();
        await until(() => woken.started === 1, SLOW_MS, "the waiting runtime's process");
        if (Deno.env.get("FLEET_REPORT") !== undefined) {
          console.log({ wokenAfterReleaseMs: woken.records[0].start / 1000 - releasedAt });
        }
      } finally {
        held.release();
        await Promise.allSettled(runs);
        await waiter[Symbol.asyncDispose]();
        await holder[Symbol.asyncDispose]();
        redis.disconnect();
      }
    },
  );
});
