// createTestRuntime: auto-advancing virtual time for every timeout, the trace
// of LangL operations, and determinism under a fixed seed.
import { assert, assertEquals, assertNotEquals, assertRejects } from "@std/assert";
import {
  AwaitTimeoutError,
  backoff,
  type LangL,
  ProcessCancelledError,
  ProcessTimeoutError,
} from "../mod.ts";
import { createTestRuntime, type TestRuntime } from "../testing.ts";

const HOUR = 3_600_000;

Deno.test("processes sleeping for virtual hours finish in little real time", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 3, seed: 1 });
  const start = performance.now();
  const ends = await runtime.runApp((app) =>
    app.forkAll(Array.from({ length: 10 }, (_, i) => i), async (_, lang) => {
      await lang.delay(HOUR);
      return lang.now();
    })
  );
  const realMs = performance.now() - start;
  console.log(`10 processes x 1 virtual hour (4 h of virtual time) took ${realMs.toFixed(1)} ms`);
  assertEquals(ends, [1, 1, 1, 2, 2, 2, 3, 3, 3, 4].map((h) => h * HOUR));
  assertEquals(runtime.clock.now(), 4 * HOUR);
  assert(realMs < 5_000, `took ${realMs} ms of real time`);
});

Deno.test("auto-advance works through nested scopes and app bodies", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1, start: 1000 });
  const times: Record<string, number> = {};
  await runtime.runApp(async (app) => {
    await app.scope(async (outer) => {
      // Holds one of the two slots, so the inner items run one after the other.
      await outer.forkProcess((lang) => lang.delay(500));
      await outer.scope(async (inner) => {
        await inner.forkAll([100, 200], (ms, lang) => lang.delay(ms));
        times.innerForks = runtime.clock.now();
        await inner.evalLang((lang) => lang.delay(50));
        times.innerBody = runtime.clock.now();
      });
      times.innerScope = runtime.clock.now();
    });
    times.outerScope = runtime.clock.now(); // waited for the 500 ms process
  });
  assertEquals(times, { innerForks: 1300, innerBody: 1350, innerScope: 1350, outerScope: 1500 });
});

Deno.test("two apps on one test runtime advance together", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const app = (ms: number) =>
    runtime.runApp((app) => app.evalLang(async (lang) => (await lang.delay(ms), lang.now())));
  assertEquals(await Promise.all([app(300), app(100)]), [300, 100]);
});

Deno.test("backoff sleeps run on the virtual clock", async () => {
  await using runtime = createTestRuntime({
    maxProcesses: 1,
    seed: 3,
    wait: backoff({ initialMs: 60_000, maxMs: 600_000 }),
  });
  const start = performance.now();
  await runtime.runApp((app) => app.forkAll([1, 2, 3, 4], (_, lang) => lang.delay(1000)));
  assert(performance.now() - start < 5_000);
  assertEquals(runtime.stats().succeeded, 4);
  // With fifo this takes 4000 ms; each backoff retry sleeps at least 30 s.
  assert(runtime.clock.now() >= 4000 + 30_000, `finished at ${runtime.clock.now()}`);
});

Deno.test("awaitResult's timeoutMs is virtual time", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await runtime.runApp(async (app) => {
    const h = await app.forkProcess(async (lang) => (await lang.delay(10_000), "slow"));
    await assertRejects(() => app.awaitResult(h, { timeoutMs: 1000 }), AwaitTimeoutError);
    assertEquals(runtime.clock.now(), 1000);
    assertEquals(h.status, "running");
    assertEquals(await app.awaitResult(h), "slow");
    assertEquals(runtime.clock.now(), 10_000);
  });
});

Deno.test("fork timeoutMs is virtual time, counted from when the slot is taken", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  const stoppedAt: number[] = [];
  const slow = (lang: LangL) =>
    lang.delay(10_000).finally(() => {
      stoppedAt.push(lang.now());
    });
  await runtime.runApp(async (app) => {
    const first = await app.forkProcess((lang) => lang.delay(1000));
    const timed = app.forkProcess(slow, { timeoutMs: 2500 }); // queued until 1000
    await app.awaitResult(first);
    const error = await assertRejects(() => timed.then((h) => app.awaitResult(h)));
    assert(error instanceof ProcessTimeoutError && error instanceof ProcessCancelledError);
    assertEquals(error.timeoutMs, 2500);
  });
  assertEquals(stoppedAt, [3500]);
  assertEquals(runtime.clock.pending, 0);
});

Deno.test("the trace records every LangL operation with process id and time", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await runtime.runApp(async (app) => {
    const h = await app.forkProcess(async (lang) => {
      await lang.delay(5);
      lang.now();
      lang.random();
      lang.getRandomInt(1, 2);
      const v = lang.newVar(0);
      await lang.readVar(v);
      await lang.writeVar(v, 1);
      await lang.modifyVar(v, (x) => x + 1);
      await lang.delay(3);
      await lang.atomically([v], (tx) => tx.write(v, 3));
      lang.logDebug("d");
      lang.logInfo("i");
      lang.logWarning("w");
      lang.logError("e");
      await lang.evalIO(() => Promise.resolve());
    });
    await app.awaitResult(h);
    await app.evalLang((lang) => lang.delay(2));
  });
  const at = (processId: number, time: number, ...ops: string[]) =>
    ops.map((op) => ({ processId, op, time }));
  assertEquals(runtime.trace, [
    ...at(1, 0, "delay"),
    ...at(1, 5, "now", "random", "getRandomInt", "newVar", "readVar", "writeVar", "modifyVar"),
    ...at(1, 5, "delay"),
    ...at(1, 8, "atomically", "logDebug", "logInfo", "logWarning", "logError", "evalIO"),
    ...at(0, 8, "delay"),
  ]);
});

Deno.test("a long trace reads back every event, read while it grows and after", async () => {
  // Past the first chunk's doublings and past the chunk size (16 384), with
  // times beyond 32 bits, so that no event is lost or rounded on the way.
  const start = 2 ** 40 + 0.5;
  await using runtime = createTestRuntime({ maxProcesses: 8, seed: 1, start });
  const delays = 2_500;
  let midway = 0;
  await runtime.runApp((app) =>
    app.forkAll([0, 1, 2, 3, 4, 5, 6, 7], async (i, lang) => {
      for (let k = 0; k < delays; k++) {
        await lang.delay(1);
        if (k % 100 === 0) lang.now();
        if (i === 0 && k === 1_000) midway = runtime.trace.length;
      }
    })
  );
  const trace = runtime.trace;
  assert(midway > 0 && midway < trace.length);
  assertEquals(trace.length, 8 * (delays + delays / 100));
  const ids = [...new Set(trace.map((event) => event.processId))].sort((a, b) => a - b);
  assertEquals(ids.length, 8);
  for (const processId of ids) {
    const expected = [];
    for (let k = 0; k < delays; k++) {
      expected.push({ processId, op: "delay", time: start + k });
      if (k % 100 === 0) expected.push({ processId, op: "now", time: start + k + 1 });
    }
    assertEquals(trace.filter((event) => event.processId === processId), expected);
  }
});

Deno.test("cancelling processes in virtual delays stops their delays and no others", async () => {
  // The clock finds a delay again from a number (its deadline modulo 2^15 and
  // its index in its bucket): start just below 2^15 so that the deadlines
  // wrap, and give each process two delays at once (the second one is
  // hooked by pointer) that share deadlines with other processes'.
  const start = 2 ** 15 - 8;
  await using runtime = createTestRuntime({ maxProcesses: 10, seed: 1, start });
  const ended: string[] = [];
  let pendingAfterCancel = -1;
  await runtime.runApp(async (app) => {
    const handles = [];
    for (let i = 0; i < 10; i++) {
      handles.push(
        await app.forkProcess(async (lang) => {
          await lang.delay(2);
          try {
            await Promise.all([lang.delay(10), lang.delay(10 + i)]);
            ended.push(`${i} done at ${lang.now() - start}`);
          } catch (error) {
            ended.push(`${i} ${(error as Error).name} at ${lang.now() - start}`);
          }
        }),
      );
    }
    await app.evalLang((lang) => lang.delay(5));
    assertEquals(runtime.clock.pending, 20);
    for (const i of [1, 4, 9]) handles[i].cancel("stop");
    pendingAfterCancel = runtime.clock.pending;
    await Promise.allSettled(handles.map((h) => app.awaitResult(h)));
  });
  assertEquals(pendingAfterCancel, 14);
  assertEquals(ended, [
    "1 ProcessCancelledError at 5",
    "4 ProcessCancelledError at 5",
    "9 ProcessCancelledError at 5",
    ...[0, 2, 3, 5, 6, 7, 8].map((i) => `${i} done at ${12 + i}`),
  ]);
  assertEquals(runtime.clock.pending, 0);
});

/** 200 processes with random delays, shared state and logs. */
async function busyProgram(runtime: TestRuntime): Promise<unknown> {
  return await runtime.runApp(async (app) => {
    const counter = app.newVar(0);
    const order = app.newVar<number[]>([]);
    const results = await app.forkAll(Array.from({ length: 200 }, (_, i) => i), async (i, lang) => {
      await lang.delay(lang.getRandomInt(0, 100));
      const ticket = await lang.modifyVar(counter, async (c) => {
        await lang.delay(lang.getRandomInt(0, 2));
        return c + 1;
      });
      await lang.modifyVar(order, (o) => [...o, i]);
      lang.logInfo("item {i} got ticket {ticket}", { i, ticket });
      return { i, ticket, at: lang.now() };
    }, { name: "item" });
    return { results, order: await app.evalLang((lang) => lang.readVar(order)) };
  });
}

Deno.test("the same seed gives the same results, logs and trace", async () => {
  const runs = [];
  for (const seed of [7, 7, 8]) {
    await using runtime = createTestRuntime({ maxProcesses: 16, seed });
    const result = await busyProgram(runtime);
    runs.push({ result, logs: [...runtime.logs], trace: [...runtime.trace] });
  }
  assertEquals(runs[0].logs.length, 200);
  assert(runs[0].trace.length > 1000);
  assertEquals(runs[1], runs[0]);
  assertNotEquals(runs[2].trace, runs[0].trace);
  assertNotEquals(runs[2].result, runs[0].result);
});
