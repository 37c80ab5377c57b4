// ScopeOptions.onFailure (API rule 13): each failure of the scope's own
// processes is reported as it happens, unless something else delivers it, and
// the scope retains none, so a scope that lives as long as a server is bounded.
import { assert, assertEquals, assertInstanceOf, assertRejects } from "@std/assert";
import {
  type AppL,
  ProcessFailedError,
  Runtime,
  type RuntimeLogger,
  type ScopeOptions,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";
import { Scope } from "../src/app/scope.ts";

const boom = (message: string) => () => {
  throw new Error(message);
};

function failAt(ms: number, message: string) {
  return async (lang: { delay(ms: number): Promise<void> }) => {
    await lang.delay(ms);
    throw new Error(message);
  };
}

function retainedBy(app: AppL): number {
  assertInstanceOf(app, Scope);
  return (app as Scope).failures.retained;
}

/** A logger that keeps error-level records. */
function errorLog(): { logger: RuntimeLogger; errors: Record<string, unknown>[] } {
  const errors: Record<string, unknown>[] = [];
  const logger: RuntimeLogger = {
    isEnabledFor: (level) => level === "error",
    debug() {},
    info() {},
    warn() {},
    error: (message, properties) => void errors.push({ message, ...properties }),
  };
  return { logger, errors };
}

Deno.test("onFailure", async (t) => {
  await t.step("is called once per failure, as it happens, and the scope resolves", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const seen: [number, string][] = [];
    const onFailure = (error: ProcessFailedError) => {
      seen.push([runtime.clock.now(), (error.cause as Error).message]);
    };
    const result = await runtime.runApp(async (app) => {
      await app.forkProcess(failAt(10, "a"));
      await app.forkProcess(failAt(30, "b"));
      await app.forkProcess((lang) => lang.delay(100));
      return "served";
    }, { onFailure });
    assertEquals(result, "served");
    assertEquals(seen, [[10, "a"], [30, "b"]]);
    assertEquals(runtime.stats().failed, 2);
  });

  await t.step("skips a failure an awaitResult is already waiting for", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const seen: number[] = [];
    await runtime.runApp(async (app) => {
      const awaited = await app.forkProcess(failAt(10, "awaited"));
      const later = await app.forkProcess(failAt(10, "later"));
      await assertRejects(() => app.awaitResult(awaited), ProcessFailedError, "awaited");
      // Handed to onFailure before anyone asked: a late await still gets it.
      const error = await assertRejects(() => app.awaitResult(later), ProcessFailedError);
      assertEquals(seen, [later.id]);
      assertEquals((error as ProcessFailedError).processId, later.id);
    }, { onFailure: (error) => seen.push(error.processId) });
  });

  await t.step("skips the forkAll failure that forkAll rejects with", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 3, seed: 1 });
    const seen: string[] = [];
    await runtime.runApp(async (app) => {
      await assertRejects(
        () => app.forkAll([1, 2, 3], (n) => n === 2 ? boom("two")() : n),
        ProcessFailedError,
        "two",
      );
      await app.forkProcess(boom("loose"));
    }, { onFailure: (error) => seen.push((error.cause as Error).message) });
    assertEquals(seen, ["loose"]);
  });

  await t.step("skips what forkAllSettled and forkStream deliver", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const seen: string[] = [];
    await runtime.runApp(async (app) => {
      const outcomes = await app.forkAllSettled([1, 2, 3], (n) => n === 2 ? n : boom(`s${n}`)());
      assertEquals(outcomes.map((o) => o.status), ["failed", "succeeded", "failed"]);
      const streamed: number[] = [];
      await assertRejects(async () => {
        for await (const n of app.forkStream([1, 2], (n) => n === 1 ? n : boom("f2")())) {
          streamed.push(n);
        }
      }, ProcessFailedError);
      await app.forkProcess(boom("loose"));
    }, { onFailure: (error) => seen.push((error.cause as Error).message) });
    assertEquals(seen, ["loose"]);
  });

  await t.step("with failFast the scope still cancels and rejects with the first", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 3, seed: 1 });
    const seen: string[] = [];
    let sibling: unknown;
    const error = await assertRejects(
      () =>
        runtime.runApp(async (app) => {
          const slow = await app.forkProcess((lang) => lang.delay(1_000));
          await app.forkProcess(failAt(5, "first"));
          sibling = await app.awaitResult(slow).then(() => undefined, (e) => e);
        }, { failFast: true, onFailure: (e) => seen.push((e.cause as Error).message) }),
      ProcessFailedError,
      "first",
    );
    assertInstanceOf(error, ProcessFailedError);
    assertInstanceOf(sibling, Error);
    // The rejection delivers it; onFailure is not told twice.
    assertEquals(seen, []);
  });

  await t.step("covers this scope's own processes, not a nested scope's", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const outer: string[] = [];
    const inner: string[] = [];
    await runtime.runApp(async (app) => {
      await assertRejects(
        () => app.scope(async (child) => void await child.forkProcess(boom("nested"))),
        ProcessFailedError,
        "nested",
      );
      await app.scope(async (child) => void await child.forkProcess(boom("own handler")), {
        onFailure: (e) => inner.push((e.cause as Error).message),
      });
      await app.forkProcess(boom("outer"));
    }, { onFailure: (e) => outer.push((e.cause as Error).message) });
    assertEquals(outer, ["outer"]);
    assertEquals(inner, ["own handler"]);
  });

  await t.step(
    "a throwing or rejecting handler is logged; the failure stays observed",
    async () => {
      const { logger, errors } = errorLog();
      await using runtime = new Runtime({ maxProcesses: 1, logger });
      let calls = 0;
      await runtime.runApp(async (app) => {
        await app.forkProcess(boom("one"));
        await app.forkProcess(boom("two")); // waits for the only slot: "one" has failed
      }, {
        onFailure: () => {
          calls++;
          if (calls === 1) throw new Error("handler broke");
          return Promise.reject(new Error("async handler broke")) as unknown as void;
        },
      });
      assertEquals(calls, 2);
      // One microtask more for the rejected promise's log.
      await Promise.resolve();
      assertEquals(errors.map((e) => (e.thrown as Error).message), [
        "handler broke",
        "async handler broke",
      ]);
      assertEquals(errors.map((e) => (e.error as ProcessFailedError).processId), [1, 2]);
    },
  );

  await t.step("may fork a retry, which the scope waits for", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
    let app: AppL | undefined;
    const retried: number[] = [];
    await runtime.runApp(async (a) => {
      app = a;
      await a.forkProcess(failAt(10, "flaky"));
    }, {
      onFailure: (error) => {
        if (retried.length > 0) return;
        retried.push(error.processId);
        void app!.forkProcess((lang) => lang.delay(50)).then((h) => retried.push(h.id));
      },
    });
    assertEquals(retried, [1, 2]);
    assertEquals(runtime.stats().succeeded, 1);
    assertEquals(runtime.clock.now(), 60);
  });

  await t.step("after the body threw, failures go to onFailure, not to the log", async () => {
    const { logger, errors } = errorLog();
    await using runtime = new Runtime({ maxProcesses: 2, logger });
    const seen: string[] = [];
    await assertRejects(
      () =>
        runtime.runApp(async (app) => {
          await app.forkProcess(boom("job"));
          await Promise.resolve();
          throw new Error("body");
        }, { onFailure: (e) => seen.push((e.cause as Error).message) }),
      Error,
      "body",
    );
    assertEquals(seen, ["job"]);
    assertEquals(errors, []);
  });

  await t.step("covers worker processes too", async () => {
    await using runtime = new Runtime({ maxProcesses: 2, workers: 1 });
    const seen: string[] = [];
    const scripts = new URL("./workers/scripts.ts", import.meta.url);
    await runtime.runApp(async (app) => {
      await app.forkWorker(scripts, "cloudy", { export: "fail" });
    }, { onFailure: (e) => seen.push(e.message) });
    assertEquals(seen.length, 1);
    assert(seen[0].includes("cloudy"), seen[0]);
  });

  await t.step("must be a function", async () => {
    await using runtime = new Runtime({ maxProcesses: 1 });
    for (const bad of [42, "log", {}, null]) {
      const options = { onFailure: bad } as unknown as ScopeOptions;
      await assertRejects(
        () => runtime.runApp(() => Promise.resolve(), options),
        TypeError,
        `runApp options.onFailure must be a function, got`,
      );
      await runtime.runApp(async (app) => {
        await assertRejects(
          () => app.scope(() => Promise.resolve(), options),
          TypeError,
          `scope options.onFailure must be a function`,
        );
      });
    }
  });
});

Deno.test("a long-lived scope with onFailure retains no failure", async (t) => {
  const FAILURES = 10_000;

  async function serve(options: ScopeOptions | undefined): Promise<number[]> {
    await using runtime = createTestRuntime({ maxProcesses: 8, seed: 3 });
    const samples: number[] = [];
    await runtime.runApp(async (app) => {
      for (let i = 1; i <= FAILURES; i++) {
        await app.forkProcess(boom(`job ${i}`));
        if (i % 1_000 === 0) samples.push(retainedBy(app));
      }
    }, options).catch((error) => {
      assertInstanceOf(error, AggregateError);
    });
    return samples;
  }

  await t.step("with onFailure: nothing held at any point", async () => {
    let reported = 0;
    const samples = await serve({ onFailure: () => void reported++ });
    assertEquals(reported, FAILURES);
    assertEquals(samples, Array(10).fill(0));
  });

  await t.step(
    "without it, every failure is held until the end (what onFailure fixes)",
    async () => {
      const samples = await serve(undefined);
      assert(samples[samples.length - 1] >= FAILURES - 8, `held: ${samples}`);
    },
  );
});
