// deno-lint-ignore-file no-explicit-any
// RuntimeOptions.rate: at most `limit` starts in any window of `intervalMs`
// on the runtime clock, together with maxProcesses, under fifo and backoff.
import { assert, assertEquals, assertInstanceOf, assertRejects } from "@std/assert";
import fc from "fast-check";
import { backoff, fifo, Runtime, ScopeClosedError, type WaitPolicy } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";
import { caseTable, ok, runTable } from "./_bad_input.ts";
import { trackListeners } from "./_listeners.ts";

const policies: [string, WaitPolicy][] = [
  ["fifo", fifo()],
  ["backoff", backoff({ initialMs: 1, maxMs: 16 })],
];

/** The most starts any window [s, s + intervalMs) holds; such a window can start at a start. */
function busiestWindow(starts: readonly number[], intervalMs: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j] < sorted[i] + intervalMs) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

Deno.test("100 starts at 10 per second take 9 s of virtual time, in milliseconds of real time", async (t) => {
  for (const [label, wait] of policies) {
    await t.step(label, async () => {
      const real = performance.now();
      await using runtime = createTestRuntime({
        maxProcesses: 100,
        rate: { limit: 10, intervalMs: 1000 },
        wait,
        seed: 3,
      });
      const starts = await runtime.runApp((app) =>
        app.forkAll(Array.from({ length: 100 }, (_, i) => i), (_, lang) => lang.now())
      );
      assertEquals(busiestWindow(starts, 1000), 10);
      if (label === "fifo") {
        // Exactly limit / interval: ten starts at each whole second.
        assertEquals(starts, starts.map((_, i) => Math.floor(i / 10) * 1000));
      } else {
        // Backoff sleeps at least until the window has room, so it cannot be
        // faster, and with maxMs 16 it is late by at most one sleep per window.
        assert(starts[99] >= 9000 && starts[99] <= 9000 + 10 * 24, `last start ${starts[99]}`);
      }
      assert(performance.now() - real < 2_000, "virtual time must not cost real time");
      assertEquals(runtime.clock.pending, 0);
    });
  }
});

Deno.test("every window holds at most `limit` starts; fifo keeps the fork order (fast-check)", async (t) => {
  for (const [label, wait] of policies) {
    await t.step(label, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 4 }), // maxProcesses
          fc.integer({ min: 1, max: 5 }), // rate.limit
          fc.integer({ min: 1, max: 40 }), // rate.intervalMs
          fc.array(
            fc.record({
              gap: fc.integer({ min: 0, max: 30 }),
              ms: fc.integer({ min: 0, max: 30 }),
            }),
            { minLength: 1, maxLength: 25 },
          ),
          async (maxProcesses, limit, intervalMs, forks) => {
            await using runtime = createTestRuntime({
              maxProcesses,
              rate: { limit, intervalMs },
              wait,
              seed: 1,
            });
            const started: { index: number; at: number }[] = [];
            await runtime.runApp(async (app) => {
              const handles = [];
              for (const [index, { gap, ms }] of forks.entries()) {
                if (gap > 0) await app.evalLang((lang) => lang.delay(gap));
                handles.push(app.forkProcess(async (lang) => {
                  started.push({ index, at: lang.now() });
                  assert(runtime.stats().active <= maxProcesses);
                  await lang.delay(ms);
                }));
              }
              for (const handle of await Promise.all(handles)) await app.awaitResult(handle);
            });
            assertEquals(started.length, forks.length);
            const most = busiestWindow(started.map((s) => s.at), intervalMs);
            assert(most <= limit, `${most} starts in one window of ${intervalMs} ms`);
            if (label === "fifo") assertEquals(started.map((s) => s.index), forks.map((_, i) => i));
            assertEquals(runtime.clock.pending, 0);
          },
        ),
        { numRuns: Number(Deno.env.get("PROCPOOL_RUNS") ?? 100) },
      );
    });
  }
});

Deno.test("stats() shows the forks waiting for the rate; tryForkProcess refuses when it is used up", async () => {
  await using runtime = createTestRuntime({
    maxProcesses: 3,
    rate: { limit: 2, intervalMs: 100 },
  });
  await runtime.runApp(async (app) => {
    const gate = Promise.withResolvers<void>();
    const first = app.tryForkProcess(() => gate.promise);
    const second = app.tryForkProcess(() => gate.promise);
    assert(first !== undefined && second !== undefined);
    assertEquals(app.tryForkProcess(() => {}), undefined, "the window is full, a slot is free");
    const queued = [1, 2].map(() => app.forkProcess(() => gate.promise));
    assertEquals(runtime.stats().waiting, 2);
    assertEquals(
      runtime.stats().waitingForRate,
      1,
      "one slot is free: one fork waits for the rate",
    );
    assertEquals(runtime.clock.pending, 1, "one timer for the whole line");
    await app.evalLang((lang) => lang.delay(100));
    // The head started at 100 (slot 3), the next waits for a slot now.
    assertEquals(runtime.stats().active, 3);
    assertEquals(runtime.stats().waiting, 1);
    assertEquals(runtime.stats().waitingForRate, 0);
    gate.resolve();
    for (const handle of await Promise.all(queued)) await app.awaitResult(handle);
  });
  assertEquals(runtime.stats().waitingForRate, 0);
  assertEquals(runtime.clock.pending, 0);
});

Deno.test("without a rate, stats() has no waitingForRate", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  assertEquals("waitingForRate" in runtime.stats(), false);
});

Deno.test("a wait for the rate is withdrawn like a wait for a slot, and its timer goes", async (t) => {
  for (const [label, wait] of policies) {
    await t.step(`${label}: by its signal`, async () => {
      await using runtime = createTestRuntime({
        maxProcesses: 2,
        wait,
        rate: { limit: 1, intervalMs: 1000 },
      });
      await runtime.runApp(async (app) => {
        await app.forkProcess(() => {});
        const controller = new AbortController();
        const listeners = trackListeners(controller.signal);
        const waiting = app.forkProcess(() => {}, { signal: controller.signal });
        assertEquals(runtime.stats().waitingForRate, 1);
        controller.abort(new Error("no longer needed"));
        await assertRejects(() => waiting, Error, "no longer needed");
        assertEquals(listeners.size, 0);
        assertEquals(runtime.stats().waiting, 0);
        assertEquals(runtime.clock.pending, 0, "the rate's timer is cleared");
      });
    });
    await t.step(`${label}: by its scope's cancellation`, async () => {
      await using runtime = createTestRuntime({
        maxProcesses: 2,
        wait,
        rate: { limit: 1, intervalMs: 1000 },
      });
      await runtime.runApp(async (app) => {
        let waiting: Promise<unknown> | undefined;
        const failed = app.scope(async (inner) => {
          await inner.forkProcess(() => {});
          waiting = inner.forkProcess(() => {});
          throw new Error("body failed");
        });
        await assertRejects(() => failed, Error, "body failed");
        assertInstanceOf(await waiting!.catch((e) => e), ScopeClosedError);
        assertEquals(runtime.stats().waiting, 0);
        assertEquals(runtime.clock.pending, 0);
      });
    });
  }
});

Deno.test("dispose clears the rate's timer on the system clock (sanitizers check it)", async (t) => {
  for (const [label, wait] of policies) {
    await t.step(label, async () => {
      const runtime = new Runtime({
        maxProcesses: 4,
        wait,
        rate: { limit: 1, intervalMs: 60_000 },
      });
      let forks: Promise<unknown>[] = [];
      const app = runtime.runApp(async (app) => {
        forks = [1, 2, 3].map(() => app.forkProcess(() => {}));
        await Promise.allSettled(forks);
      });
      await new Promise((resolve) => setTimeout(resolve, 0));
      assertEquals(runtime.stats().waitingForRate, 2);
      await runtime[Symbol.asyncDispose]();
      await app; // its body saw the forks rejected and returned
      assertInstanceOf(await forks[1].catch((e) => e), ScopeClosedError);
    });
  }
});

Deno.test("forkAll items wait for the rate too, one fork waiting at a time", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 8, rate: { limit: 3, intervalMs: 50 } });
  const samples: number[] = [];
  const starts = await runtime.runApp((app) =>
    app.forkAll(Array.from({ length: 12 }, (_, i) => i), (_, lang) => {
      samples.push(runtime.stats().waiting);
      return lang.now();
    })
  );
  assertEquals(starts, [0, 0, 0, 50, 50, 50, 100, 100, 100, 150, 150, 150]);
  assert(samples.every((waiting) => waiting <= 1));
});

const { cases, add } = caseTable();
const top = (error: new (...args: any[]) => Error) => add("top", false, error);
for (const [value, shown] of [["10/s", '"10/s"'], [null, "null"], [5, "5"]]) {
  top(TypeError)(
    `rate ${shown}`,
    () => new Runtime({ ...ok, rate: value as any }),
    "rate",
    shown as string,
  );
}
for (const [value, shown] of [["3", '"3"'], [undefined, "undefined"]]) {
  top(TypeError)(
    `rate.limit ${shown}`,
    () => new Runtime({ ...ok, rate: { limit: value as any, intervalMs: 1 } }),
    "rate.limit",
    shown as string,
  );
}
for (const value of [0, -1, 1.5, NaN, Infinity]) {
  top(RangeError)(
    `rate.limit ${value}`,
    () => new Runtime({ ...ok, rate: { limit: value, intervalMs: 1 } }),
    "rate.limit",
    String(value),
  );
}
for (const [value, shown] of [["1000", '"1000"'], [undefined, "undefined"]]) {
  top(TypeError)(
    `rate.intervalMs ${shown}`,
    () => new Runtime({ ...ok, rate: { limit: 1, intervalMs: value as any } }),
    "rate.intervalMs",
    shown as string,
  );
}
for (const value of [0, -5, NaN, Infinity]) {
  top(RangeError)(
    `rate.intervalMs ${value}`,
    () => new Runtime({ ...ok, rate: { limit: 1, intervalMs: value } }),
    "rate.intervalMs",
    String(value),
  );
}
top(RangeError)(
  "createTestRuntime rate.limit 0",
  () => createTestRuntime({ ...ok, rate: { limit: 0, intervalMs: 1 } }),
  "rate.limit",
  "0",
);

Deno.test("bad rate options throw named errors", () => runTable(cases));
