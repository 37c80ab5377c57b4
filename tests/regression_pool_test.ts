// Regressions in slot and lock accounting: locks freed on cancellation, exact
// stats(), scopes that wait for their queued forks — bug classes peers (p-limit,
// p-queue, effect, effection, @std/async pool) have had, and what the
// interleaving properties found.
import { assert, assertEquals, assertRejects } from "@std/assert";
import {
  backoff,
  fifo,
  ProcessCancelledError,
  ProcessFailedError,
  type ProcessHandle,
  type WaitPolicy,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

const policies: [string, () => WaitPolicy][] = [["fifo", fifo], ["backoff", backoff]];

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
