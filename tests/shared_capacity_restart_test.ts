// redis-server killed (SIGKILL) and restarted, empty, under a runtime with a
// shared capacity: nothing crashes or hangs, the holders' processes end with
// LeaseLostError, forks waiting for a lease retry and run once the store is
// back, a warning is logged, and fencing tokens keep increasing although the
// store forgot its counter (S3, S8).
//
// What the bound guarantees across such a restart (the server keeps nothing:
// `--save "" --appendonly no`): a store down for at least leaseMs comes back
// to a fleet whose old holders have all stopped, so the bound holds; a store
// back sooner grants the whole limit again while the old holders run on until
// their runtime's next renewal finds the leases gone (at the latest their
// local deadline, leaseMs after their last renewal before the crash), so for
// up to leaseMs up to twice the limit may run. The second step measures that.
import { assert, assertEquals, assertInstanceOf } from "@std/assert";
import { configure, type LogRecord, reset } from "@logtape/logtape";
import { LeaseLostError, Runtime } from "../mod.ts";
import { redisCapacity } from "../redis.ts";
import { maxConcurrent, wallMs } from "./_fleet_harness.ts";
import { type RedisFixture, redisFixture, sleep, until, within } from "./_redis_fixture.ts";
import { Holds, waitingRuntimes } from "./_shared_capacity.ts";

const LEASE_MS = 2_000;
const LIMIT = 2;
/** Room, beyond a lease's deadline, for a busy machine to run the timers that end it. */
const MARGIN_MS = 500;
/** Generous limits for what depends on the machine's speed, not on the protocol. */
const SLOW_MS = 15_000;
const REPORT = Deno.env.get("FLEET_REPORT") !== undefined;

/** Collects what procpool logs at warning level and above. */
async function collectWarnings(): Promise<LogRecord[]> {
  const records: LogRecord[] = [];
  await configure({
    reset: true,
    sinks: { collect: (record: LogRecord) => void records.push(record) },
    loggers: [
      { category: ["procpool"], sinks: ["collect"], lowestLevel: "warning" },
      { category: ["logtape", "meta"], lowestLevel: null },
    ],
  });
  return records;
}

/**
 * A runtime forking 2 × LIMIT holds on `key`: the first LIMIT run, the rest
 * wait for a lease. `outage` breaks the store and brings it back; the holds
 * are let go once all have started.
 */
async function aroundAnOutage(
  fx: RedisFixture,
  key: string,
  outage: (holds: Holds) => Promise<void>,
): Promise<{ holds: Holds; outageAt: number; backAt: number }> {
  const runtime = new Runtime({
    maxProcesses: 2 * LIMIT,
    shared: redisCapacity({ redis: fx.redis, key, limit: LIMIT, leaseMs: LEASE_MS }),
  });
  const holds = new Holds();
  const items = Array.from({ length: 2 * LIMIT }, (_, i) => i);
  const run = runtime.runApp((app) => app.forkAllSettled(items, (_, lang) => holds.process(lang)));
  try {
    await until(() => holds.running === LIMIT, SLOW_MS, "the first holds");
    await until(async () => await waitingRuntimes(fx.redis, key) === 1, SLOW_MS, "forks waiting");
    const oldFences = holds.fences;
    const outageAt = wallMs();
    await outage(holds);
    const backAt = wallMs();
    // The forks that waited through the outage run now.
    await until(() => holds.started === 2 * LIMIT, SLOW_MS, "the waiting forks after the restart");
    for (const fence of holds.fences.slice(LIMIT)) {
      assert(fence > Math.max(...oldFences), "fencing tokens increase across the restart");
    }
    // The old holders stop on their own, their leases gone.
    await until(
      () => holds.records.slice(0, LIMIT).every((record) => record.end !== undefined),
      LEASE_MS + SLOW_MS,
      "the old holders",
    );
    holds.release();
    const outcomes = await within(run, SLOW_MS, "the app");
    assertEquals(outcomes.map((o) => o.status), [
      "cancelled",
      "cancelled",
      "succeeded",
      "succeeded",
    ]);
    for (const record of holds.records.slice(0, LIMIT)) {
      assertInstanceOf(record.reason, LeaseLostError);
      const endedMs = record.end! / 1000 - outageAt;
      assert(endedMs <= LEASE_MS + MARGIN_MS, `an old holder ran ${endedMs} ms into the outage`);
    }
    return { holds, outageAt, backAt };
  } finally {
    holds.release();
    await within(runtime[Symbol.asyncDispose](), SLOW_MS, "dispose");
    await run.catch(() => {});
  }
}

Deno.test("shared capacity: redis-server killed and restarted empty", async (t) => {
  await using fx = await redisFixture();
  const warnings = await collectWarnings();
  try {
    await t.step("down for longer than leaseMs: the bound holds across the restart", async () => {
      let startedWhileDown = -1;
      const { holds } = await aroundAnOutage(fx, "restart-late", async (during) => {
        await fx.server.kill();
        const killedAt = wallMs();
        // Both old holders stopped, with LeaseLostError, and a warning said why.
        await until(() => during.running === 0, LEASE_MS + SLOW_MS, "the old holders");
        await until(() => warnings.length > 0, SLOW_MS, "a warning");
        const wait = killedAt + LEASE_MS + MARGIN_MS - wallMs();
        if (wait > 0) await sleep(wait);
        startedWhileDown = during.started - LIMIT;
        await fx.server.restart();
      });
      if (REPORT) console.log(warnings.map((r) => [r.category.join("."), r.rawMessage]));
      assertEquals(startedWhileDown, 0, "a process started while the store was down");
      assert(maxConcurrent(holds.intervals) <= LIMIT, `saw ${maxConcurrent(holds.intervals)}`);
      assert(
        warnings.some((r) => r.level === "warning" && r.category[0] === "procpool"),
        "a warning under procpool",
      );
    });

    await t.step("back within leaseMs: the old holders stop at their next renewal", async () => {
      const { holds, backAt } = await aroundAnOutage(fx, "restart-soon", () => fx.server.restart());
      const overlap = maxConcurrent(holds.intervals);
      const lastOld = Math.max(...holds.records.slice(0, LIMIT).map((r) => r.end!)) / 1000;
      if (REPORT) console.log({ overlap, oldStoppedAfterRestartMs: lastOld - backAt });
      assert(overlap <= 2 * LIMIT, `saw ${overlap}`);
    });
  } finally {
    await reset();
  }
});
