// forkAll (API.md point 5, last part): Promise.all over the pool. Results in
// input order, the same slots as every other fork, the first failure cancels
// the rest, and items are pulled one at a time rather than all up front.
import {
  assert,
  assertEquals,
  assertRejects,
  assertStrictEquals,
  assertStringIncludes,
} from "@std/assert";
import { ProcessFailedError } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

Deno.test("results come back in input order, not completion order", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 3, seed: 1 });
  const results = await runtime.runApp((app) =>
    app.forkAll([50, 10, 40, 20, 30], async (ms, lang) => {
      await lang.delay(ms);
      return `${ms}ms`;
    })
  );
  assertEquals(results, ["50ms", "10ms", "40ms", "20ms", "30ms"]);
  assertEquals(await runtime.runApp((app) => app.forkAll([], (n: number) => n)), []);
});

Deno.test("forkAll uses the runtime's slots, shared with every other fork", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  let peak = 0;
  await runtime.runApp(async (app) => {
    const long = await app.forkProcess((lang) => lang.delay(100));
    const all = app.forkAll([1, 2, 3, 4, 5], async (_, lang) => {
      peak = Math.max(peak, runtime.stats().active);
      await lang.delay(10);
    });
    // A fork issued meanwhile competes for the same slots.
    const competitor = await app.forkProcess((lang) => lang.now());
    await all;
    // One slot was held by `long`: the five items ran one after another, and
    // the competitor got the slot between items 2 and 3, in fifo order.
    assertEquals(runtime.clock.now(), 50);
    assertEquals(await app.awaitResult(competitor), 20);
    await app.awaitResult(long);
  });
  assertEquals(peak, 2);
  assertEquals(runtime.stats().started, 7);
});

Deno.test("the first failure cancels the others, and unstarted items never start", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const boom = new Error("item 1 failed");
  const started: number[] = [];
  let siblingStopped = false;
  let activeAtRejection = -1;
  const error = await assertRejects(
    () =>
      runtime.runApp((app) =>
        app.forkAll([0, 1, 2, 3, 4], async (i, lang) => {
          started.push(i);
          if (i === 1) {
            await lang.delay(5);
            throw boom;
          }
          try {
            await lang.delay(1_000);
          } finally {
            siblingStopped = true;
          }
        }, { name: "job" }).catch((error) => {
          activeAtRejection = runtime.stats().active;
          throw error;
        })
      ),
    ProcessFailedError,
  );
  assertStrictEquals(error.cause, boom);
  assertStringIncludes(error.message, "job[1]");
  // forkAll rejected only after its cancelled sibling had stopped.
  assert(siblingStopped);
  assertEquals(activeAtRejection, 0);
  assertEquals(runtime.clock.now(), 5);
  assertEquals(runtime.stats().cancelled, started.length - 1);
  // Items 2–4 had not started when item 1 failed: they never may.
  assertEquals(started, [0, 1]);
});

Deno.test("forkAll takes async iterables and closes generators it stops early", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  await t.step("an async generator", async () => {
    async function* items() {
      for (let i = 1; i <= 5; i++) {
        await Promise.resolve();
        yield i;
      }
    }
    const results = await runtime.runApp((app) => app.forkAll(items(), (n) => n * 10));
    assertEquals(results, [10, 20, 30, 40, 50]);
  });
  await t.step("a sync generator's finally runs on failure", async () => {
    let closed = false;
    function* items() {
      try {
        for (let i = 0; i < 1_000; i++) yield i;
      } finally {
        closed = true;
      }
    }
    await assertRejects(
      () =>
        runtime.runApp((app) =>
          app.forkAll(items(), (i) => {
            if (i === 3) throw new Error("stop here");
          })
        ),
      ProcessFailedError,
    );
    assert(closed);
  });
  await t.step("an async generator's finally runs on failure", async () => {
    let closed = false;
    let pulled = 0;
    async function* items() {
      try {
        for (let i = 0; i < 1_000; i++) {
          pulled++;
          yield i;
        }
      } finally {
        closed = true;
      }
    }
    await assertRejects(
      () =>
        runtime.runApp((app) =>
          app.forkAll(items(), async (i, lang) => {
            await lang.delay(1);
            if (i === 3) throw new Error("stop here");
          })
        ),
      ProcessFailedError,
    );
    assert(closed);
    assert(pulled < 10, `pulled ${pulled} items after the failure`);
  });
});

Deno.test("forkAll does not queue one waiter per item up front", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const count = 10_000;
  let pulled = 0;
  let finished = 0;
  let maxWaiting = 0;
  let maxAhead = 0;
  function* items() {
    for (let i = 0; i < count; i++) {
      pulled++;
      yield i;
    }
  }
  const sum = await runtime.runApp(async (app) => {
    const all = app.forkAll(items(), async (i, lang) => {
      maxWaiting = Math.max(maxWaiting, runtime.stats().waiting);
      maxAhead = Math.max(maxAhead, pulled - finished);
      if (i % 1_000 === 0) await lang.delay(1);
      finished++;
      return i;
    });
    maxWaiting = Math.max(maxWaiting, runtime.stats().waiting);
    return (await all).reduce((a, b) => a + b, 0);
  });
  assertEquals(sum, (count * (count - 1)) / 2);
  assert(maxWaiting <= 1, `stats().waiting reached ${maxWaiting}`);
  assert(maxAhead <= 3, `the feeder ran ${maxAhead} items ahead`);
});

Deno.test("forkAll's signal cancels the items and rejects with its reason", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const controller = new AbortController();
  const reason = new Error("enough");
  const error = await assertRejects(() =>
    runtime.runApp(async (app) => {
      const all = app.forkAll([1, 2, 3], (_, lang) => lang.delay(1_000), {
        signal: controller.signal,
      });
      await app.evalLang((lang) => lang.delay(10));
      controller.abort(reason);
      return await all;
    })
  );
  assertStrictEquals(error, reason);
  assertEquals(runtime.clock.now(), 10);
  assertEquals(runtime.stats().cancelled, 2);
  assertEquals(runtime.stats().started, 2);
});
