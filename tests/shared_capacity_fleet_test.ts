// Runtimes with a shared capacity in several real OS processes on one key
// (_runtime_fleet_worker.ts), through the public API only: the merged process
// intervals never exceed the limit, shares are fair (S1, S4), and the leases
// of a runtime killed with SIGKILL come back to the others, no earlier than
// their deadline in the store and soon after it (S2).
import { assert, assertEquals } from "@std/assert";
import { Runtime } from "../mod.ts";
import { redisCapacity } from "../redis.ts";
import {
  heldWithin,
  type Interval,
  maxConcurrent,
  START_LIMIT_MS,
  wallMs,
} from "./_fleet_harness.ts";
import { redisFixture, until } from "./_redis_fixture.ts";
import type { RuntimeWorkerOptions, RuntimeWorkerReport } from "./_runtime_fleet_worker.ts";
import {
  Holds,
  redisClockOffset,
  RuntimeWorker,
  storeKeys,
  waitingRuntimes,
} from "./_shared_capacity.ts";

const REPORT = Deno.env.get("FLEET_REPORT") !== undefined;
/** How long the fleet runs, and how much of its start the share check skips (> leaseMs / 3). */
const RUN_MS = 3_000;
const SETTLE_MS = 800;
/**
 * S2 promises that a dead holder's lease is taken within 250 ms of its
 * deadline in the store; on a busy 2-core machine these tests allow this much.
 */
const TAKE_MARGIN_MS = 1_000;

Deno.test("shared capacity: runtimes in several OS processes on one key", async (t) => {
  await using fx = await redisFixture();

  await t.step("4 runtimes, limit 8: never above the limit, equal shares", async () => {
    const limit = 8;
    const options: RuntimeWorkerOptions = {
      port: fx.server.port,
      key: "fleet-runtimes",
      limit,
      leaseMs: 2_000,
      // Each runtime alone could take the whole limit, and wants to.
      maxProcesses: limit,
      lanes: limit,
      holdMinMs: 2,
      holdMaxMs: 5,
    };
    const workers = Array.from({ length: 4 }, () => new RuntimeWorker(options));
    try {
      for (const worker of workers) await worker.ready();
      const endAt = wallMs() + RUN_MS;
      await Promise.all(workers.map((worker) => worker.go(endAt)));
      const reports: RuntimeWorkerReport[] = [];
      for (const worker of workers) reports.push(await worker.report());
      const all = reports.flatMap((report) => report.intervals);
      assert(maxConcurrent(all) <= limit, `at most ${limit} at once, saw ${maxConcurrent(all)}`);
      assertEquals(reports.map((report) => report.lost), [0, 0, 0, 0]);
      assertEquals(reports.flatMap((report) => report.badStats), []);
      for (const report of reports) assert(report.intervals.length > 0, "every runtime ran");
      // A lease may serve many processes of one runtime, but no token went to two runtimes.
      const fences = reports.flatMap((report) => [...new Set(report.fences)]);
      assertEquals(new Set(fences).size, fences.length, "fencing tokens shared by runtimes");
      // Shares over the time all four were running, after the first renewal
      // round (a runtime that missed a "wanted" notice learns of the others then).
      const from = SETTLE_MS * 1000 +
        Math.max(...reports.map((r) => Math.min(...r.intervals.map(([s]) => s))));
      const to = Math.min(...reports.map((r) => Math.max(...r.intervals.map(([, e]) => e))));
      assert(to - from > 1_000_000, `a window of ${(to - from) / 1000} ms to judge shares`);
      const held = reports.map((r) => heldWithin(r.intervals, from, to));
      const total = held.reduce((a, b) => a + b, 0);
      const shares = held.map((h) => h / total);
      if (REPORT) {
        console.log({
          shares,
          utilisation: total / (limit * (to - from)),
          processesPerSecond: all.length / (RUN_MS / 1000),
          windowMs: (to - from) / 1000,
          maxHeld: reports.map((r) => r.maxHeld),
        });
      }
      for (const share of shares) assert(Math.abs(share - 0.25) <= 0.07, `shares ${shares}`);
    } finally {
      for (const worker of workers) await worker.finish();
    }
  });

  await t.step(
    "kill -9 of a runtime holding leases: the others keep the bound and get them back",
    async () => {
      const key = "fleet-runtimes-kill";
      const limit = 4, leaseMs = 2_000;
      const victim = new RuntimeWorker({
        port: fx.server.port,
        key,
        limit,
        leaseMs,
        maxProcesses: limit,
        lanes: limit,
        holdMinMs: 600_000, // runs until killed
        holdMaxMs: 600_000,
        stream: true,
      });
      const shared = redisCapacity({ redis: fx.redis, key, limit, leaseMs });
      const others = [
        new Runtime({ maxProcesses: limit, shared }),
        new Runtime({ maxProcesses: limit, shared }),
      ];
      const holds = others.map(() => new Holds());
      let runs: Promise<unknown>[] = [];
      try {
        await victim.ready();
        await victim.go(wallMs() + 600_000);
        const victimStarts: { start: number; fence: number }[] = [];
        while (victimStarts.length < limit) {
          victimStarts.push(JSON.parse(await victim.line("start")));
        }
        // Both others want all they can get, and the store knows it.
        runs = others.map((runtime, i) =>
          runtime.runApp((app) => app.forkAll([1, 2, 3, 4], (_, lang) => holds[i].process(lang)))
        );
        await until(
          async () => await waitingRuntimes(fx.redis, key) === 2,
          START_LIMIT_MS,
          "both others waiting",
        );
        assertEquals(holds.map((h) => h.started), [0, 0], "nothing above the limit");
        const killedAt = wallMs();
        victim.kill();
        const status = await victim.finish();
        assertEquals(status.signal, "SIGKILL");
        const deadAt = wallMs();
        // Its last renewals' deadlines, on this process's clock (nothing renews them now).
        const offset = await redisClockOffset(fx.redis);
        const scores = await fx.redis.zrange(storeKeys(key).leases, "0", "-1", "WITHSCORES");
        const deadlines = scores.filter((_, i) => i % 2 === 1).map(Number);
        assertEquals(deadlines.length, limit);
        // On this process's clock: as early, and as late, as they can be.
        const earliest = Math.min(...deadlines) - offset.high;
        const latest = Math.max(...deadlines) - offset.low;
        // All four leases in use again, by the others.
        await until(
          () => holds[0].running + holds[1].running === limit,
          leaseMs + 10_000,
          "the leases back",
        );
        const starts = holds.flatMap((h) => h.records.map((r) => r.start / 1000)).sort((a, b) =>
          a - b
        );
        const first = starts[0], fourth = starts[limit - 1];
        if (REPORT) {
          console.log({
            firstAfterEarliestDeadlineMs: first - earliest,
            allAfterLatestDeadlineMs: fourth - latest,
            allAfterKillMs: fourth - killedAt,
          });
        }
        // Not before the store's deadline (the store cannot know the holder
        // died; 1 ms for the clocks' rounding) ...
        assert(first >= earliest - 1, `a lease taken ${earliest - first} ms before its deadline`);
        // ... and soon after it.
        assert(fourth <= latest + TAKE_MARGIN_MS, `taken ${fourth - latest} ms after the deadline`);
        assert(fourth - killedAt <= leaseMs + TAKE_MARGIN_MS, `${fourth - killedAt} ms after kill`);
        // The bound, counting the victim's processes as running until it was gone.
        const victimIntervals: Interval[] = victimStarts.map((s) => [s.start, deadAt * 1000]);
        const all = [...victimIntervals, ...holds.flatMap((h) => h.intervals)];
        assert(maxConcurrent(all) <= limit, `at most ${limit} at once, saw ${maxConcurrent(all)}`);
        const oldFences = Math.max(...victimStarts.map((s) => s.fence));
        for (const fence of holds.flatMap((h) => h.fences)) assert(fence > oldFences);
      } finally {
        for (const h of holds) h.release();
        victim.kill(); // at once, should a check above have failed
        await victim.finish();
        await Promise.allSettled(runs);
        for (const runtime of others) await runtime[Symbol.asyncDispose]();
      }
      const outcomes = await Promise.allSettled(runs);
      assertEquals(outcomes.map((o) => o.status), ["fulfilled", "fulfilled"]);
      assertEquals(await fx.redis.zcard(storeKeys(key).leases), 0);
    },
  );
});
