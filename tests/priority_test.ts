// deno-lint-ignore-file no-explicit-any
// ForkOptions.priority: under fifo a freed slot goes to the highest priority
// waiting, first come first served within one priority; forkAll items carry
// their call's priority; backoff accepts it and ignores it.
import { assertEquals } from "@std/assert";
import fc from "fast-check";
import { backoff, Runtime, TimelineRecorder } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";
import { caseTable, fn, runTable } from "./_bad_input.ts";

/** Lets every queued reaction run (grants run scripts one reaction later). */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

type Op =
  | { kind: "fork"; priority: number }
  | { kind: "finish" }
  | { kind: "withdraw"; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("fork" as const),
      // Mostly the default, as in real programs, and a few levels around it.
      priority: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, fc.integer({ min: -2, max: 3 })),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("finish" as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("withdraw" as const), pick: fc.nat(20) }),
  },
);

/** The contract as a model: who starts when. */
class Model {
  readonly started: number[] = [];
  readonly running: number[] = [];
  waiting: { index: number; priority: number }[] = [];
  constructor(readonly max: number) {}

  fork(index: number, priority: number): void {
    if (this.running.length < this.max && this.waiting.length === 0) this.#start(index);
    else this.waiting.push({ index, priority });
  }

  finish(): number | undefined {
    const done = this.running.shift();
    if (done !== undefined && this.waiting.length > 0) {
      const best = this.waiting.reduce((a, b) => (b.priority > a.priority ? b : a));
      this.waiting = this.waiting.filter((w) => w !== best);
      this.#start(best.index);
    }
    return done;
  }

  #start(index: number): void {
    this.started.push(index);
    this.running.push(index);
  }
}

Deno.test("a freed slot goes to the highest priority waiting, FIFO within one (fast-check)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 3 }),
      fc.array(opArb, { minLength: 1, maxLength: 40 }),
      async (max, ops) => {
        await using runtime = new Runtime({ maxProcesses: max });
        const model = new Model(max);
        const started: number[] = [];
        const gates: PromiseWithResolvers<void>[] = [];
        const controllers: AbortController[] = [];
        await runtime.runApp(async (app) => {
          const forks: Promise<unknown>[] = [];
          for (const op of ops) {
            if (op.kind === "fork") {
              const index = gates.length;
              gates.push(Promise.withResolvers<void>());
              controllers.push(new AbortController());
              const fork = app.forkProcess(() => {
                started.push(index);
                return gates[index].promise;
              }, { priority: op.priority, signal: controllers[index].signal });
              forks.push(fork.then((handle) => app.awaitResult(handle), () => {}));
              model.fork(index, op.priority);
            } else if (op.kind === "finish") {
              const done = model.finish();
              if (done !== undefined) gates[done].resolve();
            } else if (model.waiting.length > 0) {
              const [gone] = model.waiting.splice(op.pick % model.waiting.length, 1);
              controllers[gone.index].abort(new Error("withdrawn"));
            }
            await settle();
            assertEquals(started, model.started);
            assertEquals(runtime.stats().waiting, model.waiting.length);
          }
          while (model.running.length > 0) {
            gates[model.finish()!].resolve();
            await settle();
          }
          assertEquals(started, model.started);
          await Promise.all(forks);
        });
      },
    ),
    { numRuns: Number(Deno.env.get("PROCPOOL_RUNS") ?? 100) },
  );
});

Deno.test("forkAll items wait with their call's priority", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1 });
  const order: string[] = [];
  await runtime.runApp(async (app) => {
    const holder = await app.forkProcess((lang) => lang.delay(10));
    const low = ["a", "b"].map((name) =>
      app.forkProcess(() => void order.push(`low ${name}`), { priority: -1 })
    );
    const plain = app.forkProcess(() => void order.push("plain"));
    const batch = app.forkAll(["x", "y", "z"], (item) => void order.push(`batch ${item}`), {
      priority: 1,
    });
    await app.awaitResult(holder);
    await batch;
    for (const fork of [plain, ...low]) await app.awaitResult(await fork);
  });
  assertEquals(order, ["batch x", "batch y", "batch z", "plain", "low a", "low b"]);
});

Deno.test("forkAllSettled and forkStream items wait with their call's priority", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1 });
  const order: string[] = [];
  await runtime.runApp(async (app) => {
    const holder = await app.forkProcess((lang) => lang.delay(10));
    const plain = app.forkProcess(() => void order.push("plain"));
    const settled = app.forkAllSettled(["a", "b"], (item) => void order.push(`settled ${item}`), {
      priority: 2,
    });
    const streamed = (async () => {
      for await (
        const _ of app.forkStream(["x"], (item) => void order.push(`stream ${item}`), {
          priority: 1,
        })
      ) {
        // drain
      }
    })();
    await app.awaitResult(holder);
    await Promise.all([settled, streamed]);
    await app.awaitResult(await plain);
  });
  assertEquals(order, ["settled a", "settled b", "stream x", "plain"]);
});

Deno.test("priorities hold when an instrument watches the slots (timeline recorder)", async () => {
  await using runtime = createTestRuntime({
    maxProcesses: 1,
    recorder: new TimelineRecorder({ capacity: 100 }),
  });
  const order: string[] = [];
  await runtime.runApp(async (app) => {
    const holder = await app.forkProcess((lang) => lang.delay(1));
    const forks = [
      app.forkProcess(() => void order.push("plain")),
      app.forkProcess(() => void order.push("low"), { priority: -1 }),
      app.forkProcess(() => void order.push("urgent"), { priority: 1 }),
    ];
    await app.awaitResult(holder);
    for (const fork of forks) await app.awaitResult(await fork);
  });
  assertEquals(order, ["urgent", "plain", "low"]);
});

Deno.test("priorities order the line under a start rate too", async () => {
  await using runtime = createTestRuntime({
    maxProcesses: 10,
    rate: { limit: 1, intervalMs: 100 },
  });
  const starts: [string, number][] = [];
  await runtime.runApp(async (app) => {
    const forks = [
      app.forkProcess((lang) => void starts.push(["first", lang.now()])),
      app.forkProcess((lang) => void starts.push(["plain", lang.now()])),
      app.forkProcess((lang) => void starts.push(["urgent", lang.now()]), { priority: 2 }),
    ];
    assertEquals(runtime.stats().waitingForRate, 2);
    for (const fork of forks) await app.awaitResult(await fork);
  });
  assertEquals(starts, [["first", 0], ["urgent", 100], ["plain", 200]]);
});

Deno.test("backoff accepts a priority and ignores it", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, wait: backoff(), seed: 2 });
  const results = await runtime.runApp(async (app) => {
    const handles = await Promise.all(
      [5, 0, -5].map((priority) =>
        app.forkProcess((lang) => lang.delay(1).then(() => priority), { priority })
      ),
    );
    return Promise.all(handles.map((handle) => app.awaitResult(handle)));
  });
  assertEquals(results.sort(), [-5, 0, 5]);
});

Deno.test("after the last non-zero priority leaves, the line is one queue again", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1 });
  const order: number[] = [];
  await runtime.runApp(async (app) => {
    for (let round = 0; round < 3; round++) {
      const holder = await app.forkProcess((lang) => lang.delay(1));
      const forks = [0, 3, 0, 3, 0].map((priority, i) =>
        app.forkProcess(() => void order.push(round * 10 + i), { priority })
      );
      await app.awaitResult(holder);
      for (const fork of forks) await app.awaitResult(await fork);
      assertEquals(runtime.stats().waiting, 0);
    }
  });
  assertEquals(order, [0, 10, 20].flatMap((r) => [1, 3, 0, 2, 4].map((i) => r + i)));
});

const { cases, add } = caseTable();
const T = TypeError, R = RangeError;
for (const [value, shown] of [["1", '"1"'], [null, "null"], [1n, "1n"]] as const) {
  add("app", true, T)(
    `forkProcess priority ${shown}`,
    (e) => e.app.forkProcess(fn, { priority: value as any }),
    "forkProcess options.priority",
    shown,
  );
  add("app", false, T)(
    `tryForkProcess priority ${shown}`,
    (e) => e.app.tryForkProcess(fn, { priority: value as any }),
    "tryForkProcess options.priority",
    shown,
  );
}
for (const value of [1.5, NaN, Infinity, -Infinity, 2 ** 53]) {
  add("app", true, R)(
    `forkProcess priority ${value}`,
    (e) => e.app.forkProcess(fn, { priority: value }),
    "forkProcess options.priority",
    String(value),
  );
  add("app", true, R)(
    `forkAll priority ${value}`,
    (e) => e.app.forkAll([1], fn, { priority: value }),
    "forkAll options.priority",
    String(value),
  );
}

Deno.test("bad priorities get named errors", () => runTable(cases));

Deno.test("priority is an integer of any sign", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  await runtime.runApp(async (app) => {
    for (const priority of [-3, 0, -0, 7, Number.MAX_SAFE_INTEGER]) {
      const handle = app.tryForkProcess(() => priority, { priority });
      if (handle === undefined) throw new Error("a slot was free");
      assertEquals(await app.awaitResult(handle), priority);
    }
  });
});
