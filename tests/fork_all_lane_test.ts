// forkAll over a plain array runs its items in one lane: a single marked
// async context for the whole batch instead of one per item. The lane must
// keep every rule a per-item mark keeps: items (and whatever they leave
// behind) cannot use AppL, they see forkAll's async context, and procpool's
// own bookkeeping in the lane never makes application code look like a script.
import { AsyncLocalStorage } from "node:async_hooks";
import { assert, assertEquals, assertRejects } from "@std/assert";
import { Runtime } from "../mod.ts";
import { appLFrom } from "./_applfrom.ts";
import { createTestRuntime } from "../testing.ts";

const request = new AsyncLocalStorage<string>();

Deno.test("forkAll over an array: items are scripts before and after an await", async (t) => {
  for (const maxProcesses of [1, 2, 8]) {
    await t.step(`capacity ${maxProcesses}`, async () => {
      await using runtime = createTestRuntime({ maxProcesses, seed: 1 });
      const seen = await runtime.runApp((app) =>
        request.run("batch", () =>
          app.forkAll([1, 2, 3, 4, 5], async (n, lang) => {
            const before = appLFrom(app);
            await lang.delay(n);
            return `${n}:${before}/${appLFrom(app)}:${request.getStore()}`;
          }))
      );
      assertEquals(seen, [1, 2, 3, 4, 5].map((n) => `${n}:refused/refused:batch`));
      assertEquals(runtime.stats().started, 5);
    });
  }
});

Deno.test("forkAll over an array: a callback an item leaves behind is still a script", async () => {
  await using runtime = new Runtime({ maxProcesses: 2 });
  const later: Promise<string>[] = [];
  await runtime.runApp(async (app) => {
    await app.forkAll([1, 2, 3], (n) => {
      later.push(
        new Promise((resolve) => setTimeout(() => resolve(`${n}:${appLFrom(app)}`), 1)),
      );
    });
    // The batch has ended; its items' timers fire afterwards.
    assertEquals(await Promise.all(later), ["1:refused", "2:refused", "3:refused"]);
    assertEquals(appLFrom(app), "allowed");
  });
});

Deno.test("forkAll over an array: slots from other forkers and to other forkers", async (t) => {
  await t.step("items granted a slot by another scope's process", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
    const seen = await runtime.runApp(async (app) => {
      const blocker = await app.forkProcess((lang) => lang.delay(10));
      const batch = request.run("batch", () =>
        app.forkAll(["a", "b"], async (id, lang) => {
          const before = appLFrom(app);
          await lang.delay(1);
          return `${id}:${before}/${appLFrom(app)}:${request.getStore()}`;
        }));
      await app.awaitResult(blocker);
      return await batch;
    });
    assertEquals(seen, ["a:refused/refused:batch", "b:refused/refused:batch"]);
  });
  await t.step("a queued fork granted by an item runs in its own forker's context", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
    await runtime.runApp(async (app) => {
      const batch = request.run("batch", () => app.forkAll([5, 5], (ms, lang) => lang.delay(ms)));
      const other = await request.run("other", () =>
        app.forkProcess(async (lang) => {
          const before = appLFrom(app);
          await lang.delay(1);
          return `${before}/${appLFrom(app)}:${request.getStore()}`;
        }));
      assertEquals(await app.awaitResult(other), "refused/refused:other");
      await batch;
    });
  });
});

Deno.test("forkAll over an array: failure handling runs as application code", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const fromListener: string[] = [];
  await runtime.runApp(async (outer) => {
    const inner = outer.scope(async (app) => {
      app.signal.addEventListener("abort", () => {
        fromListener.push(`listener:${appLFrom(outer)}`);
        // Scheduled from procpool's failure bookkeeping: must not inherit the lane.
        queueMicrotask(() => fromListener.push(`microtask:${appLFrom(outer)}`));
      });
      await app.forkAll([1, 2, 3], async (n, lang) => {
        await lang.delay(n);
        if (n === 1) throw new Error("item 1 failed");
        return n;
      });
    }, { failFast: true });
    await assertRejects(() => inner, Error, "item 1 failed");
  });
  assertEquals(fromListener, ["listener:allowed", "microtask:allowed"]);
});

Deno.test("forkAll over an array: a wave of starts beyond the start queue's first size", async () => {
  // 40 free slots queue 40 start jobs at once; the queue holds 8 at first
  // and grows (_lane_starts.ts). Each item still runs in its own job, in
  // order, in the forker's context.
  const depth = new AsyncLocalStorage<number>();
  await using runtime = createTestRuntime({ maxProcesses: 40, seed: 1 });
  const items = Array.from({ length: 100 }, (_, i) => i);
  const started: number[] = [];
  const seen = await runtime.runApp((app) =>
    depth.run(1, () =>
      app.forkAll(items, async (n, lang) => {
        started.push(n);
        const before = depth.getStore()!;
        depth.enterWith(before + 1);
        await lang.delay(1 + (n % 3));
        return `${n}:${before}->${depth.getStore()}`;
      }))
  );
  assertEquals(seen, items.map((n) => `${n}:1->2`));
  assertEquals(started.slice(0, 40), items.slice(0, 40));
  assertEquals(runtime.stats().succeeded, 100);
});

Deno.test("forkAll: an array with its own iterator is read through it", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const items = [1, 2, 3];
  let steps = 0;
  Object.defineProperty(items, Symbol.iterator, {
    value: function* () {
      for (const n of Array.prototype.values.call(items)) {
        steps++;
        yield n * 10;
      }
    },
  });
  const results = await runtime.runApp((app) => app.forkAll(items, (n) => n + 1));
  assertEquals(results, [11, 21, 31]);
  assertEquals(steps, 3);
  assert(runtime.stats().succeeded === 3);
});

Deno.test("forkAll: each item runs in its forker's context, whatever another item enters", async (t) => {
  const depth = new AsyncLocalStorage<number>();
  const sources: [string, () => Iterable<number> | AsyncIterable<number>][] = [
    ["an array", () => [1, 2, 3]],
    ["a set", () => new Set([1, 2, 3])],
    ["an async generator", async function* () {
      yield* [1, 2, 3];
    }],
  ];
  for (const [label, source] of sources) {
    for (const maxProcesses of [1, 2, 8]) {
      await t.step(`${label}, capacity ${maxProcesses}`, async () => {
        await using runtime = createTestRuntime({ maxProcesses, seed: 1 });
        const seen = await runtime.runApp((app) =>
          depth.run(1, () =>
            app.forkAll(source(), async (n, lang) => {
              const before = depth.getStore()!;
              depth.enterWith(before + 1);
              await lang.delay(n);
              // The item keeps what it entered across its own awaits.
              return `${before}->${depth.getStore()}`;
            }))
        );
        assertEquals(seen, ["1->2", "1->2", "1->2"]);
      });
    }
  }
  await t.step("synchronous items, and what the forker sees afterwards", async () => {
    await using runtime = new Runtime({ maxProcesses: 2 });
    await runtime.runApp((app) =>
      depth.run(1, async () => {
        const seen = await app.forkAll([1, 2, 3, 4], () => {
          depth.enterWith(depth.getStore()! + 1);
          return depth.getStore();
        });
        assertEquals(seen, [2, 2, 2, 2]);
        assertEquals(depth.getStore(), 1);
      })
    );
  });
});

Deno.test("forkAll over an array that changes while it is fed: one result per item read", async (t) => {
  await t.step("it shrinks: the results stop where reading stopped", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
    const items = [1, 2, 3, 4, 5, 6];
    const results = await runtime.runApp((app) =>
      app.forkAll(items, (n) => {
        // The array is read by index as its iterator reads it: after item 2, length 3 ends it.
        if (n === 2) items.length = 3;
        return n * 10;
      })
    );
    // Length first: assertEquals does not tell trailing holes from a shorter array.
    assertEquals(results.length, 3);
    assertEquals(results, [10, 20, 30]);
    assertEquals(runtime.stats().started, 3);
  });
  await t.step("it grows: the new items are read too", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
    const items = [1, 2];
    const results = await runtime.runApp((app) =>
      app.forkAll(items, (n) => {
        if (n === 1) items.push(3, 4);
        return n * 10;
      })
    );
    assertEquals(results, [10, 20, 30, 40]);
  });
});
