// A runtime paused past its lease's local deadline (here a blocked event
// loop) must not let any script step on after the pause: the timers that
// came due fire in deadline order, so a script's delay (or the IO its evalIO
// waits for) would otherwise resume it before the deadline timer cancels it,
// on a lease the store has already let go (S1). Real redis-server, real time.
import { assertEquals, assertInstanceOf } from "@std/assert";
import { type Clock, type LangL, LeaseLostError, Runtime } from "../mod.ts";
import { redisCapacity } from "../redis.ts";
import { VirtualClock } from "../testing.ts";
import { redisFixture } from "./_redis_fixture.ts";

const LEASE_MS = 1_000;

/** Blocks the event loop, as a long GC pause or a synchronous stretch would. */
function blockFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* paused */ }
}

Deno.test("a runtime paused past its lease lets no script step on (S1)", async (t) => {
  await using fx = await redisFixture();
  let keys = 0;

  /** Runs `waitThenStep` in one process, pauses while it waits, and returns its outcome. */
  async function pausedWhileWaiting(
    waitThenStep: (lang: LangL) => Promise<void>,
    clock?: Clock,
    afterPause?: () => Promise<void>,
  ) {
    const shared = redisCapacity({
      redis: fx.redis,
      key: `pause-${++keys}`,
      limit: 1,
      leaseMs: LEASE_MS,
    });
    await using runtime = new Runtime({ maxProcesses: 1, shared, clock });
    const started = Promise.withResolvers<void>();
    return await runtime.runApp(async (app) => {
      const handle = await app.forkProcess(async (lang) => {
        started.resolve();
        await waitThenStep(lang);
      });
      await started.promise;
      blockFor(LEASE_MS + 300);
      await afterPause?.();
      return await app.awaitResult(handle).then(() => "finished", (error) => error);
    });
  }

  await t.step("a delay that came due during the pause rejects with LeaseLostError", async () => {
    let steps = 0;
    const outcome = await pausedWhileWaiting(async (lang) => {
      await lang.delay(100);
      steps++;
      await lang.delay(60_000);
    });
    assertInstanceOf(outcome, LeaseLostError);
    assertEquals(steps, 0, "the script stepped on after its lease had gone");
  });

  await t.step(
    "an evalIO whose IO settled during the pause rejects with LeaseLostError",
    async () => {
      let steps = 0;
      const outcome = await pausedWhileWaiting(async (lang) => {
        await lang.evalIO(() => new Promise<void>((resolve) => setTimeout(resolve, 100)));
        steps++;
        await lang.delay(60_000);
      });
      assertInstanceOf(outcome, LeaseLostError);
      assertEquals(steps, 0, "the script stepped on after its lease had gone");
    },
  );

  await t.step("so does a delay on a clock of the user's own", async () => {
    // A Clock without procpool's timer fast path: delays go through its sleep.
    const clock: Clock = {
      now: () => Date.now(),
      sleep: (ms, signal) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          signal?.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(signal.reason);
          }, { once: true });
        }),
    };
    let steps = 0;
    const outcome = await pausedWhileWaiting(async (lang) => {
      await lang.delay(100);
      steps++;
      await lang.delay(60_000);
    }, clock);
    assertInstanceOf(outcome, LeaseLostError);
    assertEquals(steps, 0, "the script stepped on after its lease had gone");
  });

  await t.step("so does a delay on a virtual clock, which fires it after the pause", async () => {
    // Leases run on real time; the delay fires when the test advances the clock.
    const clock = new VirtualClock(0);
    let steps = 0;
    const outcome = await pausedWhileWaiting(
      async (lang) => {
        await lang.delay(100);
        steps++;
        await lang.delay(60_000);
      },
      clock,
      () => clock.advance(100),
    );
    assertInstanceOf(outcome, LeaseLostError);
    assertEquals(steps, 0, "the script stepped on after its lease had gone");
  });
});
