// Each LangL operation once, on the virtual clock (and delay/now once on the
// system clock), plus the cancellation contract of each operation. atomically
// and the log operations have their own files; the lock tests are in
// shared_var_test.ts.
import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertStrictEquals,
} from "@std/assert";
import { ProcessCancelledError, ProcessTimeoutError, Runtime } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

Deno.test("delay", async (t) => {
  await t.step("waits on the virtual clock of a test runtime", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
    const times = await runtime.runApp((app) =>
      app.evalLang(async (lang) => {
        const before = lang.now();
        await lang.delay(1500);
        const after = lang.now();
        await lang.delay(0);
        return [before, after, lang.now()];
      })
    );
    assertEquals(times, [0, 1500, 1500]);
  });

  await t.step("waits for real on the system clock", async () => {
    await using runtime = new Runtime({ maxProcesses: 1 });
    const start = performance.now();
    await runtime.runApp((app) => app.evalLang((lang) => lang.delay(20)));
    const elapsed = performance.now() - start;
    // Timers never fire early by more than clock granularity.
    assert(elapsed >= 15, `a 20 ms delay took only ${elapsed} ms`);
  });
});

Deno.test("getRandomInt is inclusive on both ends", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 3 });
  const { draws, single, wide } = await runtime.runApp((app) =>
    app.evalLang((lang) => ({
      draws: Array.from({ length: 2000 }, () => lang.getRandomInt(-2, 2)),
      single: lang.getRandomInt(7, 7),
      wide: lang.getRandomInt(0, Number.MAX_SAFE_INTEGER),
    }))
  );
  assert(draws.every((n) => Number.isInteger(n) && n >= -2 && n <= 2));
  assertEquals([...new Set(draws)].sort(), [-1, -2, 0, 1, 2]);
  assertEquals(single, 7);
  assert(Number.isSafeInteger(wide) && wide >= 0);
});

Deno.test("random is in [0, 1) and spread out", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 5 });
  const draws = await runtime.runApp((app) =>
    app.evalLang((lang) => Array.from({ length: 2000 }, () => lang.random()))
  );
  assert(draws.every((x) => x >= 0 && x < 1));
  const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
  assert(mean > 0.45 && mean < 0.55, `mean ${mean}`);
  assert(Math.min(...draws) < 0.01 && Math.max(...draws) > 0.99);
});

Deno.test("now reads the runtime's clock", async (t) => {
  await t.step("the virtual clock, from its start", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1, start: 1_000_000 });
    const times = await runtime.runApp(async (app) => {
      const h = await app.forkProcess(async (lang) => {
        const first = lang.now();
        await lang.delay(250);
        return [first, lang.now()];
      });
      return await app.awaitResult(h);
    });
    assertEquals(times, [1_000_000, 1_000_250]);
  });

  await t.step("the system clock by default", async () => {
    await using runtime = new Runtime({ maxProcesses: 1 });
    const before = Date.now();
    const now = await runtime.runApp((app) => app.evalLang((lang) => lang.now()));
    assert(now >= before && now <= Date.now());
  });
});

Deno.test("shared variables", async (t) => {
  await t.step("newVar, readVar, writeVar and modifyVar", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const seen = await runtime.runApp(async (app) => {
      const h = await app.forkProcess(async (lang) => {
        const v = lang.newVar({ n: 1 });
        const first = await lang.readVar(v);
        await lang.writeVar(v, { n: 2 });
        const second = await lang.readVar(v);
        const returned = await lang.modifyVar(v, async ({ n }) => {
          await lang.delay(5);
          return { n: n * 10 };
        });
        return { v, first, second, returned };
      });
      const { v, ...rest } = await app.awaitResult(h);
      // A variable a process created outlives it and is visible to the app.
      return { ...rest, last: await app.evalLang((lang) => lang.readVar(v)) };
    });
    assertEquals(seen, { first: { n: 1 }, second: { n: 2 }, returned: { n: 20 }, last: { n: 20 } });
  });
});

Deno.test("evalIO", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });

  await t.step("passes the process's signal and returns io's value", async () => {
    const same = await runtime.runApp(async (app) => {
      const h = await app.forkProcess((lang) =>
        lang.evalIO((signal) => Promise.resolve(signal === lang.signal && !signal.aborted))
      );
      return await app.awaitResult(h);
    });
    assert(same);
  });

  await t.step("rejects with io's error, thrown or rejected, and checks io's type", async () => {
    await runtime.runApp((app) =>
      app.evalLang(async (lang) => {
        await assertRejects(() => lang.evalIO(() => Promise.reject(new URIError("a"))), URIError);
        await assertRejects(() =>
          lang.evalIO(() => {
            throw new EvalError("b");
          }), EvalError);
        // @ts-expect-error: not a function
        await assertRejects(() => lang.evalIO(42), TypeError);
      })
    );
  });

  await t.step("holds the process and its slot until io settles, even when cancelled", async () => {
    const io = Promise.withResolvers<string>();
    let ioSignal: AbortSignal | undefined;
    await runtime.runApp(async (app) => {
      const h = await app.forkProcess((lang) =>
        lang.evalIO((signal) => {
          ioSignal = signal;
          return io.promise;
        })
      );
      h.cancel("stop");
      const signal = ioSignal!;
      assert(signal.aborted);
      assertInstanceOf(signal.reason, ProcessCancelledError);
      // Real time passes; virtual time stands still while an evalIO is pending (rule 11).
      const before = runtime.clock.now();
      await new Promise((resolve) => setTimeout(resolve, 5));
      assertEquals(runtime.clock.now(), before);
      assertEquals(h.status, "running");
      assertEquals(runtime.stats().active, 1);
      assertEquals(app.tryForkProcess(() => 0), undefined);
      io.reject(signal.reason);
      await assertRejects(() => app.awaitResult(h), ProcessCancelledError);
      assertEquals(h.status, "cancelled");
      assertEquals(runtime.stats().active, 0);
    });
  });
});

Deno.test("after cancellation", async (t) => {
  await t.step("every asynchronous operation rejects with ProcessCancelledError", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
    const gate = Promise.withResolvers<void>();
    const calls = { f: 0, body: 0, io: 0 };
    const { outcomes, value } = await runtime.runApp(async (app) => {
      const v = app.newVar(1);
      const h = await app.forkProcess(async (lang) => {
        await gate.promise;
        const ops: Record<string, () => Promise<unknown>> = {
          delay: () => lang.delay(0),
          readVar: () => lang.readVar(v),
          writeVar: () => lang.writeVar(v, 2),
          modifyVar: () => lang.modifyVar(v, (x) => (calls.f++, x + 1)),
          atomically: () => lang.atomically([v], (tx) => (calls.body++, tx.write(v, 3))),
          evalIO: () => lang.evalIO(() => (calls.io++, Promise.resolve())),
        };
        const outcomes: Record<string, unknown> = {};
        for (const [name, op] of Object.entries(ops)) {
          outcomes[name] = await op().then(
            () => "resolved",
            (e) => e instanceof ProcessCancelledError ? `cancelled: ${e.cause}` : e,
          );
        }
        return outcomes;
      });
      h.cancel("enough");
      gate.resolve();
      return { outcomes: await app.awaitResult(h), value: await app.evalLang((l) => l.readVar(v)) };
    });
    const cancelled = "cancelled: enough";
    assertEquals(outcomes, {
      delay: cancelled,
      readVar: cancelled,
      writeVar: cancelled,
      modifyVar: cancelled,
      atomically: cancelled,
      evalIO: cancelled,
    });
    assertEquals(value, 1);
    assertEquals(calls, { f: 0, body: 0, io: 0 });
  });

  await t.step("a pending delay rejects at once", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
    let woke = -1;
    await runtime.runApp(async (app) => {
      const h = await app.forkProcess((lang) =>
        lang.delay(1_000_000).finally(() => woke = lang.now())
      );
      await app.evalLang((lang) => lang.delay(10));
      h.cancel();
      await assertRejects(() => app.awaitResult(h), ProcessCancelledError);
    });
    assertEquals(woke, 10);
    assertEquals(runtime.clock.now(), 10);
    assertEquals(runtime.clock.pending, 0);
  });

  await t.step("random, getRandomInt, now and the log operations still work", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
    const gate = Promise.withResolvers<void>();
    const result = await runtime.runApp(async (app) => {
      const h = await app.forkProcess(async (lang) => {
        await gate.promise;
        const r = lang.random();
        const n = lang.getRandomInt(1, 6);
        const now = lang.now();
        lang.logDebug("d");
        lang.logInfo("i");
        lang.logWarning("w");
        lang.logError("e");
        return { aborted: lang.signal.aborted, ok: r >= 0 && r < 1 && n >= 1 && n <= 6, now };
      });
      h.cancel();
      gate.resolve();
      return await app.awaitResult(h);
    });
    assertEquals(result, { aborted: true, ok: true, now: 0 });
    assertEquals(runtime.logs.map((e) => e.message), ["d", "i", "w", "e"]);
  });

  await t.step("lang.signal aborts with the cancellation error", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const reason = new Error("the user left");
    await runtime.runApp(async (app) => {
      const gate = Promise.withResolvers<void>();
      let early: AbortSignal | undefined;
      const h = await app.forkProcess(async (lang) => {
        early = lang.signal;
        await gate.promise;
        return lang.signal; // first asked for after the cancellation
      });
      assertEquals(early?.aborted, false);
      h.cancel(reason);
      assertInstanceOf(early!.reason, ProcessCancelledError);
      assertStrictEquals(early!.reason.cause, reason);
      gate.resolve();
      const late = await app.awaitResult(h);
      assert(late.aborted);
      assertStrictEquals(late.reason, early!.reason);

      const timed = await app.forkProcess(async (lang) => {
        await lang.delay(100).catch(() => {});
        return lang.signal.reason;
      }, { timeoutMs: 50 });
      assertInstanceOf(await app.awaitResult(timed), ProcessTimeoutError);
    });
  });

  await t.step("a real-clock delay clears its timer when cancelled", async () => {
    // The ops sanitizer fails this test if the 60 s timer outlives it.
    await using runtime = new Runtime({ maxProcesses: 1 });
    const start = performance.now();
    await runtime.runApp(async (app) => {
      const h = await app.forkProcess((lang) => lang.delay(60_000));
      h.cancel();
      await assertRejects(() => app.awaitResult(h), ProcessCancelledError);
    });
    assert(performance.now() - start < 5_000);
  });
});
