// Lease managers in several real OS processes on one key (_fleet_worker.ts):
// the merged hold intervals never exceed the limit, shares are fair, and the
// leases of a process killed with SIGKILL come back after their deadline.
// Wall-clock µs are comparable across processes on one host.
import { assert, assertEquals } from "@std/assert";
import { LeaseManager } from "../src/runtime/shared/lease_manager.ts";
import { redisKeys, RedisLeaseStore } from "../src/runtime/shared/redis_store.ts";
import type { WorkerOptions, WorkerReport } from "./_fleet_worker.ts";
import { waitFor } from "./_lease_waiter.ts";
import { FleetChild, heldWithin, maxConcurrent, START_LIMIT_MS, wallMs } from "./_fleet_harness.ts";
import { redisFixture, until, within } from "./_redis_fixture.ts";

const WORKER = new URL("./_fleet_worker.ts", import.meta.url).pathname;
/** How long the fleet runs, and how much of its start the share check skips (> leaseMs / 3). */
const RUN_MS = 2_500;
const SETTLE_MS = 800;

class FleetWorker extends FleetChild {
  constructor(options: WorkerOptions) {
    super(WORKER, options);
  }

  async go(endAtMs: number): Promise<void> {
    await this.send(`go ${endAtMs}`);
  }
}

Deno.test("fleet of OS processes on one key", async (t) => {
  await using fx = await redisFixture();

  await t.step("4 processes, limit 8: never above the limit, equal shares", async () => {
    const options = (key: string): WorkerOptions => ({
      port: fx.server.port,
      key,
      limit: 8,
      leaseMs: 2_000,
      concurrency: 4,
      holdMinMs: 2,
      holdMaxMs: 5,
    });
    const workers = Array.from({ length: 4 }, () => new FleetWorker(options("fleet")));
    try {
      for (const worker of workers) assertEquals(await worker.line("ready"), "ready");
      const endAt = wallMs() + RUN_MS;
      await Promise.all(workers.map((worker) => worker.go(endAt)));
      const reports: WorkerReport[] = [];
      for (const worker of workers) reports.push(JSON.parse(await worker.line("report")));
      const all = reports.flatMap((report) => report.intervals);
      assert(maxConcurrent(all) <= 8, `at most 8 at once, saw ${maxConcurrent(all)}`);
      assertEquals(reports.map((report) => report.lost), [0, 0, 0, 0]);
      // A lease serves many holds of one process, but no token went to two processes.
      const fences = reports.flatMap((report) => [...new Set(report.fences)]);
      assertEquals(new Set(fences).size, fences.length);
      // Shares over the time all four were running, after the first renewal
      // round (a holder that missed a "wanted" notice learns of the others then).
      const from = SETTLE_MS * 1000 +
        Math.max(...reports.map((r) => Math.min(...r.intervals.map(([s]) => s))));
      const to = Math.min(...reports.map((r) => Math.max(...r.intervals.map(([, e]) => e))));
      const held = reports.map((r) => heldWithin(r.intervals, from, to));
      const total = held.reduce((a, b) => a + b, 0);
      const shares = held.map((h) => h / total);
      if (Deno.env.get("FLEET_REPORT")) {
        console.log({
          shares,
          utilisation: total / (8 * (to - from)),
          holdsPerSecond: all.length / (RUN_MS / 1000),
          windowMs: (to - from) / 1000,
        });
      }
      for (const share of shares) assert(Math.abs(share - 0.25) <= 0.07, `shares ${shares}`);
    } finally {
      for (const worker of workers) await worker.finish();
    }
  });

  await t.step(
    "a process killed with SIGKILL: its leases come back after their deadline",
    async () => {
      const key = "fleet-kill";
      const leaseMs = 1_000;
      const worker = new FleetWorker({
        port: fx.server.port,
        key,
        limit: 2,
        leaseMs,
        concurrency: 2,
        holdMinMs: 600_000, // holds until killed
        holdMaxMs: 600_000,
      });
      const leases = redisKeys(key).keys[0];
      const survivor = new LeaseManager(new RedisLeaseStore(fx.redis, { key, limit: 2, leaseMs }), {
        maxHeld: 2,
      });
      try {
        assertEquals(await worker.line("ready"), "ready");
        await worker.go(wallMs() + 600_000);
        await until(
          async () => await fx.redis.zcard(leases) === 2,
          START_LIMIT_MS,
          "worker holds 2",
        );
        const granted = waitFor(survivor).granted;
        worker.kill();
        await worker.finish();
        // Deadlines on Redis's clock: the last renewal + leaseMs.
        const scores = await fx.redis.zrange(leases, "0", "-1", "WITHSCORES");
        const lastDeadline = Math.max(Number(scores[1]), Number(scores[3]));
        await within(granted, 10_000, "a lease of the killed process");
        const [seconds, micros] = await fx.redis.time();
        const late = Number(seconds) * 1000 + Number(micros) / 1000 - lastDeadline;
        if (Deno.env.get("FLEET_REPORT")) console.log({ takenAfterDeadlineMs: late });
        // S2 promises 250 ms; this bound leaves room for a busy machine.
        assert(late <= 1_000, `taken ${late} ms after the deadline`);
      } finally {
        worker.kill(); // at once, should a check above have failed
        await worker.finish();
        await survivor.dispose();
      }
    },
  );
});
