// bench:fleet's short holds sleep on a timer thread (bench/_hold_timer.ts).
// What this pins is that every one of many concurrent holds ends: the thread
// is told of each deadline earlier than the one it sleeps until (its own
// periodic wake-up is set to a minute here, so a missed notice shows as a
// hold that does not end). The "never early" checks hold by construction
// (a hold polls up to its deadline at the end); a thread that fired early
// would show only as the CPU the timer exists to save.
import { assert } from "@std/assert";
import { HoldTimer } from "../bench/_hold_timer.ts";
import { within } from "./_redis_fixture.ts";

/** A bound far above any wake-up on a busy machine (about 0.1 ms), far below the thread's own wake-up here. */
const LATE_LIMIT_MS = 10_000;
const withinLimit = <T>(work: Promise<T>) => within(work, LATE_LIMIT_MS, "a hold");

Deno.test("hold timer", async (t) => {
  const timer = new HoldTimer(64, 60_000);
  try {
    await t.step("a hold lasts at least the time asked", async () => {
      for (const ms of [0, 0.3, 1, 3]) {
        const start = performance.now();
        await withinLimit(timer.hold(ms));
        const took = performance.now() - start;
        assert(took >= ms, `asked ${ms} ms, took ${took} ms`);
      }
    });

    await t.step("concurrent holds each end, none early", async () => {
      // Longest first, so that every later deadline is earlier than the one
      // the thread sleeps until and must wake it.
      const asked = Array.from({ length: 40 }, (_, i) => (40 - i) * 0.5);
      const took = await withinLimit(Promise.all(asked.map(async (ms) => {
        const start = performance.now();
        await timer.hold(ms);
        return performance.now() - start;
      })));
      asked.forEach((ms, i) => assert(took[i] >= ms, `asked ${ms} ms, took ${took[i]} ms`));
    });

    await t.step("more holds than slots are refused, and slots come back", async () => {
      const small = new HoldTimer(2, 60_000);
      try {
        const two = [small.hold(1), small.hold(1)];
        let refused: unknown;
        await small.hold(1).catch((error) => refused = error);
        assert(refused instanceof Error);
        await withinLimit(Promise.all(two));
        await withinLimit(small.hold(0.1));
      } finally {
        small.close();
      }
    });
  } finally {
    timer.close();
  }
});
