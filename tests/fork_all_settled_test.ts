// forkAllSettled (API.md, AppL): Promise.allSettled over the pool. Every
// outcome in input order with its process id and name; no item makes it
// reject; its signal cancels what runs and skips the rest; its scope's
// cancellation rejects it; the nested-fork guard holds.
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import {
  NestedForkError,
  ProcessFailedError,
  type ProcessOutcome,
  ProcessTimeoutError,
  Runtime,
  ScopeClosedError,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";
import { recordingLogger } from "./_recording_logger.ts";

const statuses = (outcomes: ProcessOutcome<unknown>[]) => outcomes.map((o) => o.status);

Deno.test("forkAllSettled: outcomes in input order, with ids and names", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const boom = new Error("item 1 failed");
  await t.step("values, failures and timeouts side by side", async () => {
    const outcomes = await runtime.runApp((app) =>
      app.forkAllSettled([30, 10, 20, 500], async (ms, lang) => {
        await lang.delay(ms);
        if (ms === 10) throw boom;
        return ms;
      }, { name: "job", timeoutMs: 100 })
    );
    assertEquals(statuses(outcomes), ["succeeded", "failed", "succeeded", "cancelled"]);
    const [first, second, , fourth] = outcomes;
    assertEquals(first, { status: "succeeded", value: 30, id: 1, name: "job[0]" });
    if (second.status !== "failed") throw new Error(`item 1 ${second.status}`);
    assert(second.error instanceof ProcessFailedError);
    assertStrictEquals(second.error.cause, boom);
    assertEquals([second.id, second.name], [2, "job[1]"]);
    if (fourth.status !== "cancelled") throw new Error(`item 3 ${fourth.status}`);
    assert(fourth.reason instanceof ProcessTimeoutError);
    // Its failure was delivered in the outcomes: the scope did not re-raise it.
    assertEquals(runtime.stats().failed, 1);
  });
  await t.step("without a name, no name; an empty input, no outcome", async () => {
    const outcomes = await runtime.runApp((app) => app.forkAllSettled(new Set([5]), (n) => n));
    assertEquals(outcomes, [{ status: "succeeded", value: 5, id: 5 }]);
    assertEquals(await runtime.runApp((app) => app.forkAllSettled([], (n) => n)), []);
  });
  await t.step("an async source", async () => {
    async function* items() {
      yield* [1, 2, 3];
    }
    const outcomes = await runtime.runApp((app) => app.forkAllSettled(items(), (n) => n * 2));
    assertEquals(outcomes.map((o) => o.status === "succeeded" && o.value), [2, 4, 6]);
  });
});

Deno.test("forkAllSettled: the signal cancels what runs, skips the rest, and resolves", async (t) => {
  for (const [label, source] of [["an array", false], ["a generator", true]] as const) {
    await t.step(label, async () => {
      await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
      const controller = new AbortController();
      const reason = new Error("enough");
      const values = [10, 1_000, 1_000, 1_000, 1_000];
      function* generate() {
        yield* values;
      }
      const outcomes = await runtime.runApp(async (app) => {
        const all = app.forkAllSettled(source ? generate() : values, async (ms, lang) => {
          await lang.delay(ms);
          return ms;
        }, { signal: controller.signal });
        await app.evalLang((lang) => lang.delay(20));
        controller.abort(reason);
        return await all;
      });
      // At 20 ms: item 0 done, items 1 and 2 running, item 3 pulled and
      // waiting for a slot; an array also skips item 4, never pulled.
      const expected = ["succeeded", "cancelled", "cancelled", "skipped"];
      assertEquals(statuses(outcomes), source ? expected : [...expected, "skipped"]);
      for (const outcome of outcomes.slice(1)) {
        if (outcome.status === "succeeded" || outcome.status === "failed") {
          throw new Error(`an item ${outcome.status}`);
        }
        assertStrictEquals(outcome.reason, reason);
      }
      assertEquals(runtime.stats().started, 3);
      assertEquals(runtime.clock.now(), 20);
    });
  }
  await t.step("a signal aborted before the call skips every item", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const reason = new Error("too late");
    const outcomes = await runtime.runApp((app) =>
      app.forkAllSettled([1, 2], (n) => n, { signal: AbortSignal.abort(reason) })
    );
    assertEquals(outcomes, [{ status: "skipped", reason }, { status: "skipped", reason }]);
    assertEquals(runtime.stats().started, 0);
  });
});

Deno.test("forkAllSettled: its scope's cancellation rejects it; a failure is never lost", async () => {
  const logger = recordingLogger();
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1, logger });
  const bodyError = new Error("the body gave up");
  let settledError: unknown;
  const error = await assertRejects(() =>
    runtime.runApp(async (app) => {
      app.forkAllSettled([1, 1_000], async (ms, lang) => {
        await lang.delay(ms);
        throw new Error(`item ${ms} failed`);
      }).catch((e) => settledError = e);
      await app.evalLang((lang) => lang.delay(10));
      throw bodyError;
    })
  );
  assertStrictEquals(error, bodyError);
  assert(settledError instanceof ScopeClosedError);
  assertEquals(runtime.stats().failed, 1);
  // Item 0's failure was never delivered: it is logged, not dropped.
  const errors = logger.records.filter((r) => r.level === "error");
  assertEquals(errors.length, 1);
  assertEquals(((errors[0].properties?.error as Error).cause as Error).message, "item 1 failed");
});

Deno.test("forkAllSettled: a source that throws rejects it after its items stop", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const broken = new Error("the source broke");
  let stopped = 0;
  function* items() {
    yield 1;
    yield 2;
    throw broken;
  }
  const error = await assertRejects(() =>
    runtime.runApp((app) =>
      app.forkAllSettled(items(), async (_, lang) => {
        try {
          await lang.delay(1_000);
        } finally {
          stopped++;
        }
      })
    )
  );
  assertStrictEquals(error, broken);
  assertEquals(stopped, 2);
  assertEquals(runtime.stats().cancelled, 2);
});

Deno.test("forkAllSettled and forkStream refuse to run inside a process", async () => {
  await using runtime = new Runtime({ maxProcesses: 2 });
  await runtime.runApp(async (app) => {
    const inner = await app.forkProcess(async () => {
      const refused: string[] = [];
      await app.forkAllSettled([1], (n) => n).catch((e) => {
        if (e instanceof NestedForkError) refused.push("forkAllSettled");
      });
      try {
        app.forkStream([1], (n) => n);
      } catch (e) {
        if (e instanceof NestedForkError) refused.push("forkStream");
      }
      return refused;
    });
    assertEquals(await app.awaitResult(inner), ["forkAllSettled", "forkStream"]);
  });
});
