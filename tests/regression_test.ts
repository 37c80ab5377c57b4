// Regressions for the bug classes peers (p-limit, p-queue, effect, effection,
// @std/async pool) have had, and for what the interleaving properties found.
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import {
  type AppL,
  backoff,
  fifo,
  ProcessCancelledError,
  ProcessFailedError,
  type ProcessHandle,
  Runtime,
  type WaitPolicy,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

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

/** The abort listeners on `signal` registered and not removed yet. */
function trackListeners(signal: AbortSignal): Set<unknown> {
  const live = new Set<unknown>();
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  Object.assign(signal, {
    addEventListener(type: string, listener: EventListener, options?: AddEventListenerOptions) {
      if (type === "abort") live.add(listener);
      add(type, listener, options);
    },
    removeEventListener(type: string, listener: EventListener, options?: EventListenerOptions) {
      if (type === "abort") live.delete(listener);
      remove(type, listener, options);
    },
  });
  return live;
}

/** Fails instead of hanging: a lock or slot that is never freed shows up as a timeout. */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
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
        assertEquals(live.size, 100); // one per waiter, no more
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

Deno.test("cancelling a process that holds a SharedVar lock releases the lock", async (t) => {
  const holders: [
    string,
    (
      lang: import("../mod.ts").LangL,
      v: import("../mod.ts").SharedVar<number>,
      w: import("../mod.ts").SharedVar<number>,
    ) => Promise<unknown>,
  ][] = [
    ["modifyVar", (lang, v) => lang.modifyVar(v, async (x) => (await lang.delay(1_000), x + 100))],
    ["atomically", (lang, v, w) =>
      lang.atomically([v, w], async (tx) => {
        tx.write(v, 100);
        await lang.delay(1_000);
        tx.write(w, 100);
      })],
    // f ignores the cancellation: the lock is held until f ends, then freed unwritten.
    [
      "modifyVar, f ignores cancellation",
      (lang, v) =>
        lang.modifyVar(
          v,
          (x) => lang.evalIO(() => new Promise((r) => setTimeout(() => r(x + 100), 5))),
        ),
    ],
  ];
  for (const [label, hold] of holders) {
    await t.step(label, async () => {
      await using runtime = createTestRuntime({ maxProcesses: 4, seed: 4 });
      const values = await within(
        2_000,
        runtime.runApp(async (app) => {
          const [v, w] = [app.newVar(0), app.newVar(0)];
          const holder = await app.forkProcess((lang) => hold(lang, v, w));
          // One waiter is cancelled while it waits for the lock, one is not.
          const quitter = await app.forkProcess((lang) => lang.modifyVar(v, (x) => x + 1_000));
          const writer = await app.forkProcess((lang) => lang.modifyVar(v, (x) => x + 1));
          for (let i = 0; i < 5; i++) await null;
          holder.cancel("cancel the holder");
          quitter.cancel("cancel a waiter");
          await assertRejects(() => app.awaitResult(holder), ProcessCancelledError);
          await assertRejects(() => app.awaitResult(quitter), ProcessCancelledError);
          assertEquals(await app.awaitResult(writer), 1);
          return await app.evalLang((lang) => Promise.all([lang.readVar(v), lang.readVar(w)]));
        }),
      );
      assertEquals(values, [1, 0]);
    });
  }
});

Deno.test("stats() is exact at every await point", async (t) => {
  for (const [label, policy] of policies) {
    await t.step(label, async () => {
      await using runtime = createTestRuntime({ maxProcesses: 1, wait: policy(), seed: 5 });
      const counts = () => {
        const { active, waiting, started, succeeded, failed, cancelled } = runtime.stats();
        return [active, waiting, started, succeeded, failed, cancelled];
      };
      await runtime.runApp(async (app) => {
        const quick = await app.forkProcess(() => "sync");
        assertEquals(
          counts(),
          quick.status === "running" ? [1, 0, 1, 0, 0, 0] : [0, 0, 1, 1, 0, 0],
        );
        await app.awaitResult(quick);
        assertEquals(counts(), [0, 0, 1, 1, 0, 0]);
        const slow = await app.forkProcess(async (lang) => (await lang.delay(10), "slow"));
        assertEquals(counts(), [1, 0, 2, 1, 0, 0]);
        const next = app.forkProcess(async (lang) => {
          await lang.delay(10);
          throw new Error("boom");
        });
        assertEquals(counts(), [1, 1, 2, 1, 0, 0]);
        assertEquals(await app.awaitResult(slow), "slow");
        if (policy === fifo) {
          assertEquals(counts(), [1, 0, 3, 2, 0, 0]); // released and handed to the waiter
        } else {
          // Released; the waiter takes it on its next retry (maybe already).
          const [active, waiting, started, ...rest] = counts();
          assertEquals([active + waiting, started - active, ...rest], [1, 2, 2, 0, 0]);
        }
        const failing = await next;
        assertEquals(counts(), [1, 0, 3, 2, 0, 0]);
        await assertRejects(() => app.awaitResult(failing), ProcessFailedError);
        assertEquals(counts(), [0, 0, 3, 2, 1, 0]);
        const doomed: ProcessHandle<void> = await app.forkProcess((lang) => lang.delay(1_000));
        doomed.cancel();
        assertEquals(counts(), [1, 0, 4, 2, 1, 0]); // running until it stops
        await assertRejects(() => app.awaitResult(doomed), ProcessCancelledError);
        assertEquals(counts(), [0, 0, 4, 2, 1, 1]);
        {
          await using _held = await app.forkProcess((lang) => lang.delay(1_000));
          assertEquals(counts(), [1, 0, 5, 2, 1, 1]);
        }
        assertEquals(counts(), [0, 0, 5, 2, 1, 2]);
        await app.evalLang(() => assertEquals(counts(), [0, 0, 5, 2, 1, 2]));
        await app.forkAll([1, 2, 3], (n) => n);
        assertEquals(counts(), [0, 0, 8, 5, 1, 2]);
        await app.scope(async (inner) => void await inner.forkProcess(() => 1));
        assertEquals(counts(), [0, 0, 9, 6, 1, 2]);
      });
      assertEquals(counts(), [0, 0, 9, 6, 1, 2]);
    });
  }
});

Deno.test("a queued fork keeps its scope open until its process ends (found by property_test)", async (t) => {
  await t.step("fifo: the slot is handed over from another scope", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 6 });
    const outcome = runtime.runApp(async (app) => {
      await app.forkProcess((lang) => lang.delay(10));
      await app.scope((inner) => {
        inner.forkProcess(async (lang) => {
          await lang.delay(50);
          throw new Error("must not be lost");
        }).catch(() => {});
        return Promise.resolve();
      });
    });
    const error = await assertRejects(() => outcome, ProcessFailedError);
    assertEquals((error.cause as Error).message, "must not be lost");
    assertEquals(runtime.stats().active, 0);
  });
  await t.step("backoff: the waiter takes the slot itself", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, wait: backoff(), seed: 7 });
    let stopped = false;
    await runtime.runApp(async (app) => {
      await app.forkProcess((lang) => lang.delay(5));
      app.forkProcess(async (lang) => {
        await lang.delay(30);
        stopped = true;
      }).catch(() => {});
    });
    assert(stopped, "runApp resolved while its process was still running");
    assertEquals(runtime.stats().active, 0);
  });
});
