// Process handles (API.md points 3, 6, 7, 9): what forking gives back, how
// `using` and `await using` end a process, ids and names; and the other side
// of the handle/AppL split: inside a process, AppL is refused, handles work.
import {
  assertEquals,
  assertExists,
  assertFalse,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import {
  type AppL,
  NestedForkError,
  ProcessCancelledError,
  ProcessFailedError,
  type ProcessHandle,
  Runtime,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

Deno.test("tryForkProcess takes a free slot or returns undefined, never waiting", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  await runtime.runApp(async (app) => {
    const a = app.tryForkProcess((lang) => lang.delay(10));
    const b = app.tryForkProcess((lang) => lang.delay(20));
    assertExists(a);
    assertExists(b);
    let ran = false;
    const c = app.tryForkProcess(() => {
      ran = true;
    });
    assertEquals(c, undefined);
    assertFalse(ran);
    assertEquals(runtime.stats().waiting, 0);
    assertEquals(runtime.stats().started, 2);
    await app.awaitResult(a!);
    const d = app.tryForkProcess(() => "free again");
    assertExists(d);
    assertEquals(await app.awaitResult(d!), "free again");
    await app.awaitResult(b!);
  });
});

Deno.test("`using` requests cancellation at block exit without waiting", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await runtime.runApp(async (app) => {
    let escaped;
    {
      using handle = await app.forkProcess((lang) => lang.delay(1_000));
      escaped = handle;
    }
    // Disposal only asked: the process has not stopped yet, its slot is held.
    assertEquals(escaped.status, "running");
    assertEquals(runtime.stats().active, 1);
    const error = await assertRejects(() => app.awaitResult(escaped), ProcessCancelledError);
    assertEquals(error.cause, "its handle was disposed");
    assertEquals(runtime.clock.now(), 0);
  });
});

Deno.test("`await using` waits until the process stopped and its slot is free", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  await runtime.runApp(async (app) => {
    const cleanupDone = Promise.withResolvers<void>();
    // Another process ends the slow cleanup at virtual time 5.
    await app.forkProcess(async (lang) => {
      await lang.delay(5);
      cleanupDone.resolve();
    });
    let escaped;
    {
      await using handle = await app.forkProcess(async (lang) => {
        try {
          await lang.delay(1_000);
        } finally {
          await cleanupDone.promise;
        }
      });
      escaped = handle;
    }
    assertEquals(escaped.status, "cancelled");
    assertEquals(runtime.stats().active, 0);
    assertEquals(runtime.clock.now(), 5);
  });
});

Deno.test("disposing a handle twice is harmless", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await t.step("a running process is cancelled once", () =>
    runtime.runApp(async (app) => {
      const handle = await app.forkProcess((lang) => lang.delay(1_000));
      handle.cancel("first reason");
      handle[Symbol.dispose]();
      handle[Symbol.dispose]();
      await handle[Symbol.asyncDispose]();
      await handle[Symbol.asyncDispose]();
      assertEquals(handle.status, "cancelled");
      const error = await assertRejects(() => app.awaitResult(handle), ProcessCancelledError);
      assertEquals(error.cause, "first reason");
      assertEquals(runtime.stats().cancelled, 1);
    }));
  await t.step("a finished process keeps its result", () =>
    runtime.runApp(async (app) => {
      const handle = await app.forkProcess(() => "kept");
      assertEquals(await app.awaitResult(handle), "kept");
      handle[Symbol.dispose]();
      await handle[Symbol.asyncDispose]();
      assertEquals(handle.status, "succeeded");
      assertEquals(await app.awaitResult(handle), "kept");
      assertEquals(runtime.stats().cancelled, 1);
    }));
});

Deno.test("process ids are 1, 2, 3, … per runtime in fork order; evalLang is 0", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const ids = await runtime.runApp(async (app) => {
    const own = (lang: { processId: number }) => lang.processId;
    const first = await app.forkProcess(own);
    const second = app.tryForkProcess(own)!;
    const third = app.forkProcess(own); // waits for a slot
    const fromForkAll = await app.forkAll(["a", "b"], (_, lang) => lang.processId);
    const handles = [first, second, await third];
    assertEquals(handles.map((h) => h.id), [1, 2, 3]);
    const seen = [];
    for (const handle of handles) seen.push(await app.awaitResult(handle));
    return [...seen, ...fromForkAll, await app.evalLang(own)];
  });
  assertEquals(ids, [1, 2, 3, 4, 5, 0]);
  const next = await runtime.runApp(async (app) => (await app.forkProcess(() => {})).id);
  assertEquals(next, 6);
  await using fresh = new Runtime({ maxProcesses: 1 });
  assertEquals(await fresh.runApp(async (app) => (await app.forkProcess(() => {})).id), 1);
});

Deno.test("a handle carries the name given at fork", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  await runtime.runApp(async (app) => {
    const named = await app.forkProcess(() => 1, { name: "indexer" });
    const anonymous = await app.forkProcess(() => 2);
    const tried = app.tryForkProcess(() => 3, { name: "tried" });
    assertEquals(named.name, "indexer");
    assertEquals(anonymous.name, undefined);
    await app.awaitResult(named);
    await app.awaitResult(anonymous);
    assertEquals(tried?.name, "tried");
    await app.awaitResult(tried!);
    const failing = await app.forkProcess(() => {
      throw new Error("bad input");
    }, { name: "parser" });
    const error = await assertRejects(() => app.awaitResult(failing), ProcessFailedError);
    assertStringIncludes(error.message, "parser");
  });
});

/** Calls every AppL method and runApp; reports how each one answered. */
async function tryAppL(app: AppL, runtime: Runtime, handle: ProcessHandle<unknown>) {
  const calls: [string, () => unknown][] = [
    ["forkProcess", () => app.forkProcess(() => 1)],
    ["tryForkProcess", () => app.tryForkProcess(() => 1)],
    ["awaitResult", () => app.awaitResult(handle)],
    ["forkAll", () => app.forkAll([1], (n) => n)],
    ["evalLang", () => app.evalLang(() => 1)],
    ["newVar", () => app.newVar(0)],
    ["scope", () => app.scope(() => Promise.resolve(1))],
    ["runApp", () => runtime.runApp(() => Promise.resolve(1))],
  ];
  const named = (error: unknown) => error instanceof NestedForkError ? "NestedForkError" : error;
  const outcome: Record<string, unknown> = {};
  for (const [name, call] of calls) {
    let result: unknown;
    try {
      result = call();
    } catch (error) {
      outcome[name] = ["throws", named(error)];
      continue;
    }
    try {
      outcome[name] = ["resolves", await result];
    } catch (error) {
      outcome[name] = ["rejects", named(error)];
    }
  }
  return outcome;
}

const refused = {
  forkProcess: ["rejects", "NestedForkError"],
  tryForkProcess: ["throws", "NestedForkError"],
  awaitResult: ["rejects", "NestedForkError"],
  forkAll: ["rejects", "NestedForkError"],
  evalLang: ["rejects", "NestedForkError"],
  newVar: ["throws", "NestedForkError"],
  scope: ["rejects", "NestedForkError"],
  runApp: ["rejects", "NestedForkError"],
};

Deno.test("no nested forks: inside a script every AppL method and runApp refuse", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  await runtime.runApp(async (app) => {
    const target = await app.forkProcess(() => "target");
    await app.awaitResult(target);
    const scripts: [string, () => Promise<unknown>][] = [
      [
        "a process, before its first await",
        async () => app.awaitResult(await app.forkProcess(() => tryAppL(app, runtime, target))),
      ],
      ["a process, after an await", async () =>
        app.awaitResult(
          await app.forkProcess(async (lang) => {
            await lang.delay(1);
            return tryAppL(app, runtime, target);
          }),
        )],
      ["an evalLang script", () => app.evalLang(() => tryAppL(app, runtime, target))],
      ["an evalLang script, after an await", () =>
        app.evalLang(async (lang) => {
          await lang.delay(1);
          return tryAppL(app, runtime, target);
        })],
      ["an evalIO callback", async () =>
        app.awaitResult(
          await app.forkProcess((lang) =>
            lang.evalIO(async () => {
              await Promise.resolve();
              return tryAppL(app, runtime, target);
            })
          ),
        )],
    ];
    for (const [where, run] of scripts) {
      await t.step(where, async () => {
        const started = runtime.stats().started;
        assertEquals(await run(), refused);
        // Nothing was forked by the refused calls: only the script itself ran.
        assertEquals(runtime.stats().started - started, where.startsWith("an evalLang") ? 0 : 1);
      });
    }
    // The app is still usable from the application layer afterwards.
    assertEquals(await app.awaitResult(await app.forkProcess(() => "still open")), "still open");
  });
});

Deno.test("handle methods work inside a process", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  await runtime.runApp(async (app) => {
    const victim = await app.forkProcess((lang) => lang.delay(1_000));
    const seen = await app.awaitResult(
      await app.forkProcess(() => {
        const before = victim.status;
        victim.cancel("from a sibling");
        return [before, victim.id];
      }),
    );
    assertEquals(seen, ["running", victim.id]);
    const error = await assertRejects(() => app.awaitResult(victim), ProcessCancelledError);
    assertEquals(error.cause, "from a sibling");
  });
});

Deno.test("the application layer stays AppL code after a process ends", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await runtime.runApp(async (app) => {
    const first = await app.forkProcess((lang) => lang.delay(5));
    // Granted by hand-off from inside the first process's stop bookkeeping.
    const second = await app.forkProcess(() => 2);
    const third = await app.forkProcess(() => 3);
    await app.awaitResult(first);
    assertEquals(await app.awaitResult(second), 2);
    assertEquals(await app.awaitResult(third), 3);
    await app.evalLang((lang) => lang.delay(1));
    assertEquals(await app.forkAll([1, 2], (n) => n), [1, 2]);
    app.newVar(0);
  });
  // And after runApp itself resolved.
  assertEquals(await runtime.runApp((app) => app.evalLang(() => "ok")), "ok");
});
