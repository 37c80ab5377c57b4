// Worker processes keep the process contract (API.md W1–W3, rules 1–5, 7–9):
// the same behavioural suite runs once per isolation kind, on one test
// runtime per kind so that its warm workers are reused from step to step.
import { assert, assertEquals, assertInstanceOf, assertRejects } from "@std/assert";
import {
  AwaitTimeoutError,
  ProcessCancelledError,
  ProcessFailedError,
  ProcessTimeoutError,
  ScopeClosedError,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

const scripts = new URL("./workers/scripts.ts", import.meta.url);

for (const isolation of ["thread", "process"] as const) {
  Deno.test(`worker processes (${isolation}) keep the process contract`, async (t) => {
    await using runtime = createTestRuntime({ maxProcesses: 3, workers: 2, seed: 11 });
    const options = { isolation } as const;

    await t.step("a result crosses back; the handle's status and stats() add up", async () => {
      const value = await runtime.runApp(async (app) => {
        const handle = await app.forkWorker<number, number>(scripts, 21, options);
        assertEquals(handle.status, "running");
        const value = await app.awaitResult(handle);
        assertEquals(handle.status, "succeeded");
        assertEquals(await app.awaitResult(handle), 42, "every await gives the value");
        return value;
      });
      assertEquals(value, 42);
      const stats = runtime.stats();
      assertEquals(stats.active, 0);
      assertEquals(stats.started, stats.succeeded + stats.failed + stats.cancelled);
    });

    await t.step("delay and now run on the virtual clock", async () => {
      const start = runtime.clock.now();
      const woke = await runtime.runApp(async (app) =>
        app.awaitResult(await app.forkWorker(scripts, 3_600_000, { ...options, export: "sleepy" }))
      );
      assertEquals(woke, start + 3_600_000);
      assertEquals(runtime.clock.now(), start + 3_600_000);
    });

    await t.step(
      "a thrown Error subclass arrives as the cause, name and message kept",
      async () => {
        const error = await runtime.runApp(async (app) => {
          const handle = await app.forkWorker(scripts, "no sky tonight", {
            ...options,
            export: "fail",
            name: "observer",
          });
          return await assertRejects(() => app.awaitResult(handle), ProcessFailedError);
        });
        const cause = error.cause as Error;
        assertInstanceOf(cause, Error);
        assertEquals(cause.name, "ObservatoryError");
        assertEquals(cause.message, "no sky tonight");
        assert(cause.stack?.includes("scripts.ts"), cause.stack);
        assert(error.message.includes("(observer)"), error.message);
      },
    );

    await t.step("an unobserved failure rejects the scope", async () => {
      const error = await assertRejects(
        () =>
          runtime.runApp(async (app) => {
            await app.forkWorker(scripts, "unseen", { ...options, export: "fail" });
          }),
        ProcessFailedError,
      );
      assertEquals((error.cause as Error).name, "ObservatoryError");
    });

    await t.step("cancel: the script's signal aborts, it ends cancelled", async () => {
      const before = runtime.logs.length;
      await runtime.runApp(async (app) => {
        const handle = await app.forkWorker(scripts, null, { ...options, export: "signalAware" });
        await app.evalLang((lang) => lang.delay(5));
        handle.cancel("enough");
        const error = await assertRejects(() => app.awaitResult(handle), ProcessCancelledError);
        assertEquals(error.cause, "enough");
        assertEquals(handle.status, "cancelled");
      });
      const cleanup = runtime.logs.slice(before).find((entry) => entry.message.startsWith("clean"));
      assertEquals(cleanup?.properties.name, "ProcessCancelledError");
    });

    await t.step("a cancelled script that returns ends succeeded", async () => {
      await runtime.runApp(async (app) => {
        const handle = await app.forkWorker(scripts, 50, { ...options, export: "ignoresCancel" });
        handle.cancel();
        assertEquals(await app.awaitResult(handle), "finished anyway");
      });
    });

    await t.step(
      "fork timeoutMs ends it with ProcessTimeoutError; await timeoutMs only stops waiting",
      async () => {
        await runtime.runApp(async (app) => {
          const slow = await app.forkWorker(scripts, 1_000, { ...options, export: "sleepy" });
          await assertRejects(() => app.awaitResult(slow, { timeoutMs: 10 }), AwaitTimeoutError);
          assertEquals(slow.status, "running");
          const timed = await app.forkWorker(scripts, null, {
            ...options,
            export: "signalAware",
            timeoutMs: 100,
          });
          await assertRejects(() => app.awaitResult(timed), ProcessTimeoutError);
          assertEquals(timed.status, "cancelled");
          assertEquals(typeof await app.awaitResult(slow), "number");
        });
      },
    );

    await t.step("failFast: the first failure cancels the rest of the scope", async () => {
      const error = await assertRejects(
        () =>
          runtime.runApp(async (app) => {
            const waiting = await app.forkWorker(scripts, null, {
              ...options,
              export: "signalAware",
            });
            await app.forkWorker(scripts, "first", { ...options, export: "fail" });
            await app.evalLang((lang) => lang.delay(100));
            assertEquals(waiting.status, "cancelled");
          }, { failFast: true }),
        ProcessFailedError,
      );
      assertEquals((error.cause as Error).message, "first");
    });

    await t.step(
      "a scope waits for its worker processes; a cancelled scope cancels them",
      async () => {
        let handle: { status: string } | undefined;
        const value = await runtime.runApp(async (app) => {
          handle = await app.forkWorker(scripts, 30, { ...options, export: "sleepy" });
          return "body done";
        });
        assertEquals(value, "body done");
        assertEquals(handle?.status, "succeeded");
        await assertRejects(
          () =>
            runtime.runApp(async (app) => {
              handle = await app.forkWorker(scripts, null, { ...options, export: "signalAware" });
              throw new Error("body failed");
            }),
          Error,
          "body failed",
        );
        assertEquals(handle?.status, "cancelled");
      },
    );

    await t.step(
      "workers bound the parallelism, slots the processes: a fork waits for both",
      async () => {
        await runtime.runApp(async (app) => {
          const handles = [];
          for (let i = 0; i < 5; i++) {
            handles.push(
              await app.forkWorker<number, number>(scripts, 10, { ...options, export: "sleepy" }),
            );
            assert(runtime.stats().active <= 2, "two workers, so at most two running");
          }
          const woke = await Promise.all(handles.map((h) => app.awaitResult(h)));
          const start = woke[0] - 10;
          assertEquals(woke.map((t) => t - start), [10, 10, 20, 20, 30]);
        });
      },
    );

    await t.step(
      "a fork waiting for a worker is withdrawn by its signal and by its scope",
      async () => {
        await runtime.runApp(async (app) => {
          const busy = [
            await app.forkWorker(scripts, 20, { ...options, export: "sleepy" }),
            await app.forkWorker(scripts, 20, { ...options, export: "sleepy" }),
          ];
          const controller = new AbortController();
          const waiting = app.forkWorker(scripts, 1, { ...options, signal: controller.signal });
          controller.abort(new Error("changed my mind"));
          await assertRejects(() => waiting, Error, "changed my mind");
          await Promise.all(busy.map((h) => app.awaitResult(h)));
        });
        let waiting: Promise<unknown> | undefined;
        await assertRejects(
          () =>
            runtime.runApp(async (app) => {
              await app.forkWorker(scripts, 20, { ...options, export: "sleepy" });
              await app.forkWorker(scripts, 20, { ...options, export: "sleepy" });
              waiting = app.forkWorker(scripts, 1, options);
              waiting.catch(() => {});
              throw new Error("leaving");
            }),
          Error,
          "leaving",
        );
        await assertRejects(() => waiting!, ScopeClosedError);
      },
    );

    await t.step("shared variables cross as references: modifyVar and atomically", async () => {
      const [count, balances] = await runtime.runApp(async (app) => {
        const counter = app.newVar(0);
        const from = app.newVar(100);
        const to = app.newVar(0);
        const handles = await Promise.all([
          app.forkWorker(scripts, { counter, times: 5 }, { ...options, export: "counter" }),
          app.forkWorker(scripts, { counter, times: 5 }, { ...options, export: "counter" }),
          app.forkWorker(scripts, { from, to, amount: 30 }, { ...options, export: "transfer" }),
        ]);
        const results = await Promise.all(handles.map((h) => app.awaitResult(h)));
        assertEquals(results[2], "moved");
        return app.evalLang(async (lang) =>
          [await lang.readVar(counter), [await lang.readVar(from), await lang.readVar(to)]] as const
        );
      });
      assertEquals(count, 10);
      assertEquals(balances, [70, 30]);
    });

    await t.step("logs reach the runtime's logger with the process id", async () => {
      const before = runtime.logs.length;
      const id = await runtime.runApp(async (app) =>
        app.awaitResult(
          await app.forkWorker<string, number>(scripts, "a comet", {
            ...options,
            export: "logs",
            name: "logger",
          }),
        )
      );
      const entries = runtime.logs.slice(before);
      assertEquals(entries.map((e) => [e.processId, e.level, e.message]), [
        [id, "info", "a comet"],
        [id, "warning", "{message} again"],
      ]);
      assertEquals(entries[0].processName, "logger");
      assertEquals(entries[0].properties, { from: "worker" });
    });

    await t.step("random draws are the process's own seeded stream", async () => {
      const [id, drawn] = await runtime.runApp(async (app) => {
        const handle = await app.forkWorker<number, number[]>(scripts, 3, {
          ...options,
          export: "randoms",
        });
        return [handle.id, await app.awaitResult(handle)] as const;
      });
      // The same process id on a runtime with the same seed draws the same numbers here.
      await using twin = createTestRuntime({ maxProcesses: 1, seed: 11 });
      const expected = await twin.runApp(async (app) => {
        for (let i = 1; i < id; i++) await app.forkProcess(() => {});
        return app.awaitResult(
          await app.forkProcess((lang) => [lang.random(), lang.random(), lang.random()]),
        );
      });
      assertEquals(drawn, expected);
    });

    await t.step("an uncloneable result fails the process with a clear error", async () => {
      const error = await runtime.runApp(async (app) => {
        const handle = await app.forkWorker(scripts, null, { ...options, export: "uncloneable" });
        return await assertRejects(() => app.awaitResult(handle), ProcessFailedError);
      });
      assert(
        (error.cause as Error).message.includes("result could not be sent"),
        (error.cause as Error).message,
      );
    });

    await t.step("an uncloneable input fails the process with a clear error", async () => {
      const error = await runtime.runApp(async (app) => {
        const handle = await app.forkWorker(scripts, { f: () => 1 }, options);
        return await assertRejects(() => app.awaitResult(handle), ProcessFailedError);
      });
      assert(
        (error.cause as Error).message.includes("forkWorker input could not be sent"),
        (error.cause as Error).message,
      );
    });

    await t.step("a missing export fails the process and names it", async () => {
      const error = await runtime.runApp(async (app) => {
        const handle = await app.forkWorker(scripts, null, { ...options, export: "nothing" });
        return await assertRejects(() => app.awaitResult(handle), ProcessFailedError);
      });
      assert((error.cause as Error).message.includes('"nothing"'));
    });

    assertEquals(runtime.stats().active, 0);
  });
}
