// evalIO's options (API.md rule 13: timeoutMs on any evalIO, shielded evalIO
// for cleanup) and the virtual clock standing still while one is pending
// (rule 11).
import { assert, assertEquals, assertInstanceOf, assertRejects } from "@std/assert";
import { type LangL, ProcessCancelledError, Runtime } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";
import { checkIOOptions } from "../src/lang/_eval_io.ts";

const realDelay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An io that settles only when its signal aborts, with the reason's name. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<string>((resolve) =>
    signal.addEventListener("abort", () => resolve(signal.reason.name), { once: true })
  );

Deno.test("a pending evalIO holds the virtual clock", async (t) => {
  await t.step(
    "a 20 ms real request under a 10-minute fork timeout does not time out",
    async () => {
      await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
      const result = await runtime.runApp(async (app) => {
        const h = await app.forkProcess(
          (lang) => lang.evalIO(() => realDelay(20).then(() => "response")),
          { timeoutMs: 600_000 },
        );
        return await app.awaitResult(h);
      });
      assertEquals(result, "response");
      assertEquals(runtime.clock.now(), 0);
    },
  );

  await t.step("other processes' delays wait for the IO, then run in virtual time", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const seen: string[] = [];
    await runtime.runApp(async (app) => {
      await app.forkProcess(async (lang) => {
        await lang.evalIO(() => realDelay(20));
        seen.push(`io done at ${lang.now()}`);
        await lang.delay(5);
        seen.push(`io process at ${lang.now()}`);
      });
      await app.forkProcess(async (lang) => {
        await lang.delay(1_000);
        seen.push(`sleeper at ${lang.now()}`);
      });
    });
    assertEquals(seen, ["io done at 0", "io process at 5", "sleeper at 1000"]);
  });

  await t.step("a shielded evalIO holds it too", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
    const at = await runtime.runApp(async (app) => {
      await app.forkProcess((lang) => lang.delay(1_000));
      return await app.evalLang(async (lang) => {
        await lang.evalIO(() => realDelay(10), { shielded: true });
        return lang.now();
      });
    });
    assertEquals(at, 0);
    assertEquals(runtime.clock.now(), 1_000);
  });
});

Deno.test("evalIO timeoutMs aborts io's signal after real time and waits for io", async (t) => {
  await using runtime = new Runtime({ maxProcesses: 1 });

  await t.step(
    "the signal aborts with a TimeoutError; evalIO returns what io returns",
    async () => {
      const start = performance.now();
      const name = await runtime.runApp((app) =>
        app.evalLang((lang) => lang.evalIO(untilAborted, { timeoutMs: 10 }))
      );
      assertEquals(name, "TimeoutError");
      assert(performance.now() - start >= 9);
    },
  );

  await t.step("a cancel still aborts a timed evalIO that is not shielded", async () => {
    await runtime.runApp(async (app) => {
      let reason: unknown;
      const h = await app.forkProcess((lang) =>
        lang.evalIO((signal) => untilAborted(signal).then(() => reason = signal.reason), {
          timeoutMs: 60_000,
        })
      );
      h.cancel("stop");
      await app.awaitResult(h);
      assertInstanceOf(reason, ProcessCancelledError);
    });
  });

  await t.step("a timeout beyond setTimeout's 2^31 - 1 ms does not fire early", async () => {
    const aborted = await runtime.runApp((app) =>
      app.evalLang((lang) =>
        lang.evalIO(async (signal) => (await realDelay(5), signal.aborted), { timeoutMs: 2 ** 40 })
      )
    );
    assertEquals(aborted, false);
  });

  await t.step("a timer is cleared when io settles first (the sanitizers check)", async () => {
    const value = await runtime.runApp((app) =>
      app.evalLang((lang) => lang.evalIO(() => Promise.resolve(7), { timeoutMs: 60_000 }))
    );
    assertEquals(value, 7);
  });
});

Deno.test("a shielded evalIO runs after the process was cancelled", async (t) => {
  await t.step("its signal ignores the cancellation; other operations refuse", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
    const seen: unknown[] = [];
    await runtime.runApp(async (app) => {
      const h = await app.forkProcess(async (lang: LangL) => {
        try {
          await lang.delay(60_000);
        } finally {
          await assertRejects(() => lang.evalIO(() => Promise.resolve()), ProcessCancelledError);
          seen.push(
            await lang.evalIO(async (signal) => {
              await realDelay(5);
              return `released, aborted: ${signal.aborted}`;
            }, { shielded: true }),
          );
        }
      });
      h.cancel("shutdown");
      await assertRejects(() => app.awaitResult(h), ProcessCancelledError);
      assertEquals(h.status, "cancelled");
    });
    assertEquals(seen, ["released, aborted: false"]);
  });

  await t.step("it is bounded by its own timeoutMs", async () => {
    await using runtime = new Runtime({ maxProcesses: 1 });
    const name = await runtime.runApp(async (app) => {
      let name: string | undefined;
      const h = await app.forkProcess(async (lang) => {
        try {
          await lang.delay(60_000);
        } finally {
          name = await lang.evalIO(untilAborted, { shielded: true, timeoutMs: 10 });
        }
      });
      h.cancel();
      await app.awaitResult(h).catch(() => {});
      return name;
    });
    assertEquals(name, "TimeoutError");
  });

  await t.step("its default bound is 5 000 ms; Infinity means none", () => {
    assertEquals(checkIOOptions({ shielded: true }), { shielded: true, timeoutMs: 5_000 });
    assertEquals(checkIOOptions({ shielded: true, timeoutMs: Infinity }), {
      shielded: true,
      timeoutMs: undefined,
    });
    assertEquals(checkIOOptions({}), { shielded: false, timeoutMs: undefined });
  });
});
