// Regressions around AbortSignals: pre-aborted signals, listeners a reused
// signal must not accumulate, and aborts that withdraw queued forks or stop
// running processes — bug classes peers (p-limit, p-queue, effect, effection,
// @std/async pool) have had.
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import {
  type AppL,
  backoff,
  fifo,
  ProcessCancelledError,
  Runtime,
  type WaitPolicy,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";
import { trackListeners } from "./_listeners.ts";

const policies: [string, () => WaitPolicy][] = [["fifo", fifo], ["backoff", backoff]];

/** Where `promise` stands after a burst of microtasks (no timer can fire meanwhile). */
async function settledSoon(promise: Promise<unknown>): Promise<{ state: string; value?: unknown }> {
  let result: { state: string; value?: unknown } = { state: "pending" };
  promise.then(
    (value) => result = { state: "fulfilled", value },
    (value) => result = { state: "rejected", value },
  );
  for (let i = 0; i < 20; i++) await null;
  return result;
}

Deno.test("a fork whose signal is already aborted rejects at once", async (t) => {
  for (const [label, policy] of policies) {
    for (const full of [false, true]) {
      await t.step(`${label}, pool ${full ? "full" : "free"}`, async () => {
        await using runtime = createTestRuntime({ maxProcesses: 1, wait: policy(), seed: 1 });
        await runtime.runApp(async (app) => {
          const blocker = full ? await app.forkProcess((lang) => lang.delay(1_000)) : undefined;
          const reason = new Error("already aborted");
          const signal = AbortSignal.abort(reason);
          const before = runtime.stats();
          for (
            const attempt of [
              app.forkProcess(() => 1, { signal }),
              app.forkAll([1, 2], (n) => n, { signal }),
              ...(blocker ? [app.awaitResult(blocker, { signal })] : []),
            ]
          ) {
            assertEquals(await settledSoon(attempt), { state: "rejected", value: reason });
          }
          let thrown: unknown;
          try {
            app.tryForkProcess(() => 1, { signal });
          } catch (error) {
            thrown = error;
          }
          assertStrictEquals(thrown, reason);
          assertEquals(runtime.stats(), before);
          blocker?.cancel();
        });
      });
    }
  }
});

Deno.test("a long-lived signal reused by 100 000 forks keeps no listener", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  const shutdown = new AbortController();
  const signal = shutdown.signal;
  const live = trackListeners(signal);
  let peak = 0;
  const sample = () => peak = Math.max(peak, live.size);
  await runtime.runApp(async (app) => {
    // 40 000 that find the slot free and complete.
    for (let i = 0; i < 40_000; i++) {
      const handle = await app.forkProcess(() => i, { signal });
      sample();
      assertEquals(await app.awaitResult(handle, { signal }), i);
    }
    // 40 000 that queue behind a sibling (it holds the slot until its
    // bookkeeping runs) and get it by hand-off.
    for (let i = 0; i < 20_000; i++) {
      const first = app.forkProcess(() => 1, { signal });
      const second = app.forkProcess(() => 2, { signal });
      assertEquals(runtime.stats().waiting, 1);
      sample();
      await app.awaitResult(await first, { signal });
      await app.awaitResult(await second, { signal });
    }
    // 20 000 that queue behind a long process and are withdrawn when their
    // scope is cancelled.
    const gate = Promise.withResolvers<void>();
    const blocker = await app.forkProcess((lang) => lang.evalIO(() => gate.promise));
    const marker = new Error("cancel the batch");
    for (let batch = 0; batch < 200; batch++) {
      const ended = app.scope((inner) => {
        for (let i = 0; i < 100; i++) inner.forkProcess(() => i, { signal }).catch(() => {});
        assertEquals(runtime.stats().waiting, 100);
        assertEquals(live.size, 1); // one for all the waiters (abort_fanout_test.ts)
        return Promise.reject(marker);
      });
      assertStrictEquals(await ended.catch((e) => e), marker);
      assertEquals(runtime.stats().waiting, 0);
      assertEquals(live.size, 0);
    }
    gate.resolve();
    await app.awaitResult(blocker);
  });
  assertEquals(live.size, 0);
  assert(peak <= 3, `at most 3 listeners at a time, saw ${peak}`);
  assertEquals(runtime.stats(), {
    max: 1,
    active: 0,
    waiting: 0,
    started: 80_001,
    succeeded: 80_001,
    failed: 0,
    cancelled: 0,
  });
});

Deno.test("aborting a queued fork removes it from the wait at once", async (t) => {
  for (const [label, policy] of policies) {
    await t.step(label, async () => {
      await using runtime = createTestRuntime({ maxProcesses: 1, wait: policy(), seed: 2 });
      await runtime.runApp(async (app) => {
        const blocker = await app.forkProcess((lang) => lang.delay(1_000));
        for (let i = 0; i < 1_000; i++) {
          const controller = new AbortController();
          const queued = app.forkProcess(() => i, { signal: controller.signal });
          assertEquals(runtime.stats().waiting, 1);
          controller.abort(i);
          assertEquals(runtime.stats().waiting, 0);
          assertEquals(await settledSoon(queued), { state: "rejected", value: i });
        }
        assertEquals(runtime.stats().started, 1);
        blocker.cancel();
      });
      if (label === "backoff") assertEquals(runtime.clock.pending, 0);
    });
  }
});

async function assertPoolUsable(runtime: Runtime, app: AppL, max: number): Promise<void> {
  let peak = 0;
  const results = await app.forkAll(
    Array.from({ length: 3 * max }, (_, i) => i),
    async (i, lang) => {
      peak = Math.max(peak, runtime.stats().active);
      await lang.delay(1);
      return i;
    },
  );
  assertEquals(results, Array.from({ length: 3 * max }, (_, i) => i));
  assertEquals(peak, max);
}

Deno.test("aborting a running and a queued process together leaves the pool usable", async (t) => {
  const orders = ["one signal", "queued first", "running first", "running, then queued later"];
  for (const [label, policy] of policies) {
    for (const order of orders) {
      await t.step(`${label}, ${order}`, async () => {
        await using runtime = createTestRuntime({ maxProcesses: 2, wait: policy(), seed: 3 });
        await runtime.runApp(async (app) => {
          const runningCtl = new AbortController();
          const queuedCtl = order === "one signal" ? runningCtl : new AbortController();
          const other = await app.forkProcess((lang) => lang.delay(5));
          const running = await app.forkProcess((lang) => lang.delay(1_000), {
            signal: runningCtl.signal,
          });
          const queued = app.forkProcess((lang) => lang.delay(1_000), { signal: queuedCtl.signal });
          queued.catch(() => {});
          if (order === "queued first") queuedCtl.abort("q");
          runningCtl.abort("r");
          if (order === "queued first" || order === "running first") queuedCtl.abort("q");
          await assertRejects(() => app.awaitResult(running), ProcessCancelledError);
          if (order === "running, then queued later") {
            // The freed slot may have been handed to the queued fork meanwhile.
            const handle = await Promise.race([queued, app.awaitResult(other).then(() => queued)]);
            queuedCtl.abort("q");
            await assertRejects(() => app.awaitResult(handle), ProcessCancelledError);
          } else {
            assertEquals(await queued.catch((e) => e), order === "one signal" ? "r" : "q");
          }
          await app.awaitResult(other);
          const st = runtime.stats();
          assertEquals([st.active, st.waiting], [0, 0]);
          assertEquals(st.started, st.succeeded + st.failed + st.cancelled);
          await assertPoolUsable(runtime, app, 2);
        });
        assertEquals(runtime.clock.pending, 0);
      });
    }
  }
});
