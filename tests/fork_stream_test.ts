// forkStream (API.md, AppL): results in input order as the loop reads them,
// never more than maxProcesses items pulled ahead of the reader; failures as
// in forkAll; leaving the loop cancels what runs and waits for it.
import { AsyncLocalStorage } from "node:async_hooks";
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { ProcessFailedError, ScopeClosedError } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

Deno.test("forkStream: results in input order, pulled only as the reader takes them", async (t) => {
  for (const maxProcesses of [1, 3]) {
    await t.step(`capacity ${maxProcesses}`, async () => {
      await using runtime = createTestRuntime({ maxProcesses, seed: 1 });
      let pulled = 0;
      let reads = 0;
      let maxAhead = 0;
      function* items() {
        for (const ms of [50, 10, 40, 20, 30, 5, 5, 60]) {
          pulled++;
          maxAhead = Math.max(maxAhead, pulled - reads);
          yield ms;
        }
      }
      const seen = await runtime.runApp(async (app) => {
        const seen: number[] = [];
        const stream = app.forkStream(items(), async (ms, lang) => {
          await lang.delay(ms);
          return ms;
        });
        // Counts the reader's next() calls: each takes one result.
        const reader = { [Symbol.asyncIterator]: () => ({ next: () => (reads++, stream.next()) }) };
        for await (const ms of reader) {
          seen.push(ms);
          // A slow reader: the pool must not run ahead of it.
          await app.evalLang((lang) => lang.delay(100));
        }
        return seen;
      });
      assertEquals(seen, [50, 10, 40, 20, 30, 5, 5, 60]);
      assertEquals(maxAhead, maxProcesses);
      assertEquals(runtime.stats().started, 8);
    });
  }
  await t.step("arrays, async sources and an empty input", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    async function* generate() {
      yield* [1, 2, 3];
    }
    const read = (items: Iterable<number> | AsyncIterable<number>) =>
      runtime.runApp((app) => Array.fromAsync(app.forkStream(items, (n) => n * 2)));
    assertEquals(await read([1, 2, 3]), [2, 4, 6]);
    assertEquals(await read(generate()), [2, 4, 6]);
    assertEquals(await read([]), []);
  });
});

Deno.test("forkStream: a failure cancels the rest and the next read rejects with it", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const boom = new Error("item 1 failed");
  const started: number[] = [];
  let stopped = 0;
  const seen: number[] = [];
  const error: ProcessFailedError = await runtime.runApp((app) =>
    assertRejects(async () => {
      for await (
        const n of app.forkStream([0, 1, 2, 3, 4], async (n, lang) => {
          started.push(n);
          try {
            await lang.delay(n === 1 ? 5 : 1_000);
            if (n === 1) throw boom;
            return n;
          } finally {
            stopped++;
          }
        }, { name: "job" })
      ) seen.push(n);
    }, ProcessFailedError)
  );
  assertStrictEquals(error.cause, boom);
  assertEquals(error.message.includes("job[1]"), true);
  assertEquals(seen, []);
  assertEquals(started, [0, 1]);
  // The read rejected only after the cancelled sibling had stopped.
  assertEquals(stopped, 2);
  assertEquals(runtime.stats().cancelled, 1);
  // Delivered to the reader: the scope resolved.
});

Deno.test("forkStream: leaving the loop cancels the items in flight and waits", async (t) => {
  await t.step("break", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 3, seed: 1 });
    let closed = false;
    let stopped = 0;
    function* items() {
      try {
        for (let i = 0; i < 1_000_000; i++) yield i;
      } finally {
        closed = true;
      }
    }
    const seen: number[] = [];
    await runtime.runApp(async (app) => {
      for await (
        const n of app.forkStream(items(), async (n, lang) => {
          try {
            await lang.delay(n === 0 ? 1 : 1_000);
            return n;
          } finally {
            stopped++;
          }
        })
      ) {
        seen.push(n);
        break;
      }
      // Every item the stream started has stopped by now.
      assertEquals(runtime.stats().active, 0);
      assertEquals(stopped, runtime.stats().started);
    });
    assertEquals(seen, [0]);
    assert(closed);
    assertEquals(runtime.stats().cancelled, runtime.stats().started - 1);
    assertEquals(runtime.clock.now(), 1);
  });
  await t.step("a failure nobody read goes back to the scope", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const boom = new Error("item 1 failed");
    const error = await assertRejects(() =>
      runtime.runApp(async (app) => {
        const stream = app.forkStream([0, 1], async (n, lang) => {
          await lang.delay(n === 0 ? 10 : 1);
          if (n === 1) throw boom;
          return n;
        });
        await app.evalLang((lang) => lang.delay(5));
        await stream.return!();
      }), ProcessFailedError);
    assertStrictEquals(error.cause, boom);
  });
  await t.step("a body that does not finish reading closes the stream", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    let closed = false;
    function* items() {
      try {
        yield* [1, 2, 3, 4];
      } finally {
        closed = true;
      }
    }
    let leaked: AsyncIterableIterator<number> | undefined;
    await runtime.runApp(async (app) => {
      leaked = app.forkStream(items(), async (n, lang) => {
        await lang.delay(1_000);
        return n;
      });
      assertEquals(await leaked.next(), { done: false, value: 1 });
    });
    // Items 1 and 2 finished; item 3, pulled after the read, was cancelled.
    assert(closed);
    assertEquals(runtime.stats().cancelled, 1);
    assertEquals(await leaked!.next(), { done: true, value: undefined });
  });
});

Deno.test("forkStream: the signal and the scope's cancellation end the reading", async (t) => {
  await t.step("the signal", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const controller = new AbortController();
    const reason = new Error("enough");
    const error = await runtime.runApp((app) =>
      assertRejects(async () => {
        const stream = app.forkStream([1, 2, 3], (_, lang) => lang.delay(1_000), {
          signal: controller.signal,
        });
        await app.evalLang((lang) => lang.delay(10));
        controller.abort(reason);
        await stream.next();
      })
    );
    assertStrictEquals(error, reason);
    assertEquals(runtime.stats().cancelled, 2);
  });
  await t.step("the scope's cancellation", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const bodyError = new Error("the body gave up");
    let readError: unknown;
    const error = await assertRejects(() =>
      runtime.runApp(async (app) => {
        const stream = app.forkStream([1, 2, 3], (_, lang) => lang.delay(1_000));
        stream.next().catch((e) => readError = e);
        await app.evalLang((lang) => lang.delay(10));
        throw bodyError;
      })
    );
    assertStrictEquals(error, bodyError);
    assert(readError instanceof ScopeClosedError);
  });
});

Deno.test("forkStream: items run in the forker's context, not the reader's", async (t) => {
  const sources: [string, () => Iterable<number> | AsyncIterable<number>][] = [
    ["an array", () => [1, 2, 3]],
    ["a generator", function* () {
      yield* [1, 2, 3];
    }],
    ["an async generator", async function* () {
      yield* [1, 2, 3];
    }],
  ];
  for (const [label, source] of sources) {
    await t.step(label, async () => {
      await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
      const where = new AsyncLocalStorage<string>();
      const seen = await runtime.runApp(async (app) => {
        const stream = where.run("forker", () =>
          app.forkStream(source(), async (n, lang) => {
            await lang.delay(n);
            return `${n}:${where.getStore()}`;
          }));
        return await where.run("reader", () => Array.fromAsync(stream));
      });
      assertEquals(seen, ["1:forker", "2:forker", "3:forker"]);
    });
  }
});
