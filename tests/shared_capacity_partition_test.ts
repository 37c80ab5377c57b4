// A runtime cut off from Redis by the blackholing proxy (bytes vanish, no FIN
// or RST) while another runtime waits on the same key: the cut-off runtime's
// processes end with LeaseLostError before cut + leaseMs (S2), the fleet
// never runs more than the limit (S1), the cut-off runtime starts nothing
// without the store, and once the link heals it works again.
import { assert, assertEquals, assertInstanceOf } from "@std/assert";
import { Redis } from "ioredis";
import { LeaseLostError, Runtime } from "../mod.ts";
import { redisCapacity } from "../redis.ts";
import { BlackholeProxy } from "./_blackhole_proxy.ts";
import { type Interval, maxConcurrent, wallMs } from "./_fleet_harness.ts";
import { redisFixture, sleep, until, within } from "./_redis_fixture.ts";
import { Holds, RuntimeWorker, waitingRuntimes } from "./_shared_capacity.ts";

const LEASE_MS = 2_000;
/** How long the link stays cut. */
const CUT_MS = 6_000;
/**
 * The cut comes at least this long after the last byte through the proxy, so
 * that the last renewal the cut-off runtime got through was sent at least
 * this long before the cut: its local deadlines then fall this long before
 * cut + leaseMs, room for its timers to fire on a busy machine.
 */
const QUIET_MS = 200;
/** Generous limits for what depends on the machine's speed, not on the protocol. */
const SLOW_MS = 15_000;
const REPORT = Deno.env.get("FLEET_REPORT") !== undefined;

/** Cuts the link once it has been quiet for QUIET_MS; returns when (wall-clock ms). */
async function cutInALull(proxy: BlackholeProxy): Promise<number> {
  const giveUp = performance.now() + SLOW_MS;
  while (performance.now() - proxy.lastTrafficAt < QUIET_MS) {
    if (performance.now() > giveUp) throw new Error(`no lull of ${QUIET_MS} ms on the link`);
    await sleep(5);
  }
  // The check and the cut in one synchronous step: no byte slips in between.
  proxy.cut();
  return wallMs();
}

Deno.test("shared capacity: a runtime cut off from redis and healed", async () => {
  await using fx = await redisFixture();
  await using proxy = new BlackholeProxy(fx.server.port);
  const far = new Redis({ host: "127.0.0.1", port: proxy.port, lazyConnect: true });
  far.on("error", () => {});
  await far.connect();
  const key = "partition", limit = 2;
  const cutOff = new Runtime({
    maxProcesses: limit,
    shared: redisCapacity({ redis: far, key, limit, leaseMs: LEASE_MS }),
  });
  const other = new Runtime({
    maxProcesses: limit,
    shared: redisCapacity({ redis: fx.redis, key, limit, leaseMs: LEASE_MS }),
  });
  const before = new Holds(), others = new Holds(), after = new Holds();
  const runs: Promise<unknown>[] = [];
  try {
    // The cut-off runtime holds the whole limit; the other waits for it.
    const lost = cutOff.runApp(async (app) => {
      const handles = [
        await app.forkProcess(before.process),
        await app.forkProcess(before.process),
      ];
      return await Promise.allSettled(handles.map((handle) => app.awaitResult(handle)));
    });
    runs.push(lost);
    await until(() => before.running === limit, SLOW_MS, "the cut-off runtime holds the limit");
    const taken = other.runApp((app) => app.forkAll([1, 2], (_, lang) => others.process(lang)));
    runs.push(taken);
    await until(async () => await waitingRuntimes(fx.redis, key) === 1, SLOW_MS, "other waits");

    const cutAt = await cutInALull(proxy);

    // Its processes end with LeaseLostError, before cut + leaseMs.
    const outcomes = await within(lost, LEASE_MS + SLOW_MS, "the cut-off processes");
    for (const outcome of outcomes) {
      assertEquals(outcome.status, "rejected");
      assertInstanceOf((outcome as PromiseRejectedResult).reason, LeaseLostError);
    }
    for (const record of before.records) {
      assertInstanceOf(record.reason, LeaseLostError, "lang.signal.reason");
      const endedMs = record.end! / 1000 - cutAt;
      assert(endedMs < LEASE_MS, `a cut-off process ended ${endedMs} ms after the cut`);
    }
    assertEquals(cutOff.stats().shared?.held, 0);

    // The other runtime gets the leases once they expire in the store.
    await until(() => others.running === limit, SLOW_MS, "the other runtime takes over");
    if (REPORT) {
      console.log({
        lostAfterCutMs: before.records.map((r) => r.end! / 1000 - cutAt),
        takenAfterCutMs: others.records.map((r) => r.start / 1000 - cutAt),
      });
    }
    // A fork in the cut-off runtime waits: nothing starts without a lease.
    const again = cutOff.runApp(async (app) => {
      const handle = await app.forkProcess(after.process);
      return await app.awaitResult(handle);
    });
    runs.push(again);
    await sleep(Math.max(0, cutAt + CUT_MS - wallMs()));
    assertEquals(after.started, 0, "started while cut off");
    assertEquals(cutOff.stats().shared?.held, 0);

    // Healed: the bytes held during the cut arrive (stale renewals revive
    // nothing), and the cut-off runtime gets a lease once the other lets go.
    proxy.heal();
    after.release();
    others.release();
    await within(taken, SLOW_MS, "the other runtime's processes");
    const fence = await within(again, SLOW_MS, "a process after the heal");
    assert(fence !== undefined && fence > Math.max(...others.fences), "a newer fencing token");

    const all = [before, others, after].flatMap((holds) => holds.intervals);
    assert(maxConcurrent(all) <= limit, `at most ${limit} at once, saw ${maxConcurrent(all)}`);
  } finally {
    proxy.heal();
    for (const holds of [before, others, after]) holds.release();
    await Promise.allSettled(runs);
    await cutOff[Symbol.asyncDispose]();
    await other[Symbol.asyncDispose]();
    await far.quit().catch(() => {});
    far.disconnect();
  }
});

Deno.test("shared capacity: a runtime in another OS process cut off from redis", async () => {
  await using fx = await redisFixture();
  await using proxy = new BlackholeProxy(fx.server.port);
  const key = "partition-process", limit = 2;
  // Its processes hold until cancelled; each lane forks again at once.
  const cutOff = new RuntimeWorker({
    port: proxy.port,
    key,
    limit,
    leaseMs: LEASE_MS,
    maxProcesses: limit,
    lanes: limit,
    holdMinMs: 600_000,
    holdMaxMs: 600_000,
    stream: true,
  });
  const other = new Runtime({
    maxProcesses: limit,
    shared: redisCapacity({ redis: fx.redis, key, limit, leaseMs: LEASE_MS }),
  });
  const others = new Holds();
  let taken: Promise<unknown> = Promise.resolve();
  try {
    await cutOff.ready();
    await cutOff.go(wallMs() + 600_000);
    type Start = { start: number; fence: number };
    type End = { end: number; lost: boolean };
    const starts: Start[] = [];
    for (let i = 0; i < limit; i++) starts.push(await cutOff.next<Start>("a start"));
    taken = other.runApp((app) => app.forkAll([1, 2], (_, lang) => others.process(lang)));
    await until(async () => await waitingRuntimes(fx.redis, key) === 1, SLOW_MS, "other waits");

    const cutAt = await cutInALull(proxy);
    const ends: End[] = [];
    for (let i = 0; i < limit; i++) ends.push(await cutOff.next<End>("an end", LEASE_MS + SLOW_MS));
    await until(() => others.running === limit, SLOW_MS, "the other runtime takes over");
    if (REPORT) {
      console.log({
        lostAfterCutMs: ends.map((e) => e.end / 1000 - cutAt),
        takenAfterCutMs: others.records.map((r) => r.start / 1000 - cutAt),
      });
    }
    for (const end of ends) {
      assert(end.lost, "ended by LeaseLostError");
      assert(end.end / 1000 - cutAt < LEASE_MS, `ended ${end.end / 1000 - cutAt} ms after the cut`);
    }
    const intervals: Interval[] = starts.map((s, i) => [s.start, ends[i].end]);
    const all = [...intervals, ...others.intervals];
    assert(maxConcurrent(all) <= limit, `at most ${limit} at once, saw ${maxConcurrent(all)}`);

    // Healed, it gets a lease again once the other lets go.
    proxy.heal();
    others.release();
    const again = await cutOff.next<Start>("a start after the heal", SLOW_MS);
    assert(again.fence > Math.max(...others.fences), "a newer fencing token");
    await within(taken, SLOW_MS, "the other runtime's processes");
  } finally {
    proxy.heal();
    others.release();
    cutOff.kill();
    await cutOff.finish();
    await taken.catch(() => {});
    await other[Symbol.asyncDispose]();
  }
});
