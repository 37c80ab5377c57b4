// The Runtime (API.md "mod.ts" and point 10): construction and its checks, the
// fixed capacity, stats(), disposal; and bad input at every AppL method, which
// must be reported the right way and leave the pool as it was.
import {
  assert,
  assertEquals,
  assertFalse,
  assertRejects,
  assertStringIncludes,
  assertThrows,
} from "@std/assert";
import {
  type AppL,
  type ProcessHandle,
  Runtime,
  RuntimeDisposedError,
  type RuntimeOptions,
  ScopeClosedError,
} from "../mod.ts";
import { createTestRuntime, VirtualClock } from "../testing.ts";

/** One macrotask turn: lets every queued microtask run. */
const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

Deno.test("maxProcesses must be a positive safe integer", async (t) => {
  for (
    const [value, shown] of [[0, "0"], [-1, "-1"], [1.5, "1.5"], [NaN, "NaN"], [
      Infinity,
      "Infinity",
    ]] as const
  ) {
    await t.step(`${shown}: RangeError`, () => {
      const error = assertThrows(() => new Runtime({ maxProcesses: value }), RangeError);
      assertStringIncludes(error.message, "maxProcesses");
      assertStringIncludes(error.message, shown);
    });
  }
  await t.step(`"3": TypeError`, () => {
    const options = { maxProcesses: "3" } as unknown as RuntimeOptions;
    const error = assertThrows(() => new Runtime(options), TypeError);
    assertStringIncludes(error.message, "maxProcesses");
    assertStringIncludes(error.message, "3");
  });
  await t.step("missing: TypeError", () => {
    assertThrows(() => new Runtime({} as RuntimeOptions), TypeError, "maxProcesses");
    assertThrows(() => new Runtime(undefined as unknown as RuntimeOptions), TypeError);
  });
  await t.step("other options are checked too", () => {
    const bad = (extra: Record<string, unknown>) =>
      ({ maxProcesses: 1, ...extra }) as unknown as RuntimeOptions;
    assertThrows(() => new Runtime(bad({ wait: "fifo" })), TypeError, "wait");
    assertThrows(() => new Runtime(bad({ clock: {} })), TypeError, "clock");
    assertThrows(() => new Runtime(bad({ seed: "1" })), TypeError, "seed");
    assertThrows(() => new Runtime(bad({ seed: NaN })), RangeError, "seed");
    assertThrows(() => new Runtime(bad({ logger: 42 })), TypeError, "logger");
  });
});

Deno.test("maxProcesses has a getter and no setter", async () => {
  await using runtime = new Runtime({ maxProcesses: 3 });
  assertEquals(runtime.maxProcesses, 3);
  // Modules are strict mode: assigning to a getter-only property throws.
  assertThrows(() => {
    (runtime as { maxProcesses: number }).maxProcesses = 10;
  }, TypeError);
  assertEquals(runtime.maxProcesses, 3);
  assertEquals(runtime.stats().max, 3);
});

Deno.test("the seed getter reports the seed in use", async () => {
  await using seeded = new Runtime({ maxProcesses: 1, seed: 1234 });
  assertEquals(seeded.seed, 1234);
  await using unseeded = new Runtime({ maxProcesses: 1 });
  assert(Number.isFinite(unseeded.seed));
});

Deno.test("stats() reports capacity, occupancy and outcomes", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  assertEquals(runtime.stats(), {
    max: 2,
    active: 0,
    waiting: 0,
    started: 0,
    succeeded: 0,
    failed: 0,
    cancelled: 0,
  });
  await runtime.runApp(async (app) => {
    const ok = await app.forkProcess((lang) => lang.delay(10));
    const bad = await app.forkProcess(async (lang) => {
      await lang.delay(5);
      throw new Error("x");
    });
    const queued = app.forkProcess((lang) => lang.delay(1_000));
    assertEquals(runtime.stats(), {
      max: 2,
      active: 2,
      waiting: 1,
      started: 2,
      succeeded: 0,
      failed: 0,
      cancelled: 0,
    });
    await app.awaitResult(ok);
    await app.awaitResult(bad).catch(() => {});
    const slow = await queued;
    slow.cancel();
    await app.awaitResult(slow).catch(() => {});
  });
  assertEquals(runtime.stats(), {
    max: 2,
    active: 0,
    waiting: 0,
    started: 3,
    succeeded: 1,
    failed: 1,
    cancelled: 1,
  });
});

Deno.test("`await using` disposes the runtime at block exit", async () => {
  let escaped: Runtime | undefined;
  let handle: ProcessHandle<void> | undefined;
  let app: Promise<void> | undefined;
  {
    await using runtime = new Runtime({ maxProcesses: 1, clock: new VirtualClock() });
    escaped = runtime;
    app = runtime.runApp(async (app) => {
      handle = await app.forkProcess((lang) => lang.delay(1_000));
      await app.awaitResult(handle);
    });
    app.catch(() => {});
    await turn();
    assertEquals(runtime.stats().active, 1);
  }
  assertEquals(handle?.status, "cancelled");
  assertEquals(escaped.stats().active, 0);
  await assertRejects(() => app!);
  await assertRejects(() => escaped.runApp(() => Promise.resolve()), RuntimeDisposedError);
});

Deno.test("disposal cancels every process and waits until all have stopped", async () => {
  const runtime = new Runtime({ maxProcesses: 2, clock: new VirtualClock() });
  const gate = Promise.withResolvers<void>();
  const handles: ProcessHandle<unknown>[] = [];
  const app = runtime.runApp(async (app) => {
    handles.push(await app.forkProcess((lang) => lang.delay(1_000)));
    handles.push(
      await app.forkProcess(async () => {
        await gate.promise; // ignores cancellation
        return "stubborn";
      }),
    );
    await app.awaitResult(handles[1]);
  });
  app.catch(() => {});
  await turn();
  let disposed = false;
  const disposal = runtime[Symbol.asyncDispose]().then(() => disposed = true);
  await turn();
  await turn();
  assertFalse(disposed);
  assertEquals(handles[0].status, "cancelled");
  assertEquals(handles[1].status, "running");
  assertEquals(runtime.stats().active, 1);
  gate.resolve();
  await disposal;
  assertEquals(runtime.stats().active, 0);
  assertEquals(handles[1].status, "succeeded");
  const error = await assertRejects(() => app);
  // The body's pending await was refused: ScopeClosedError, caused by the disposal.
  assert(
    error instanceof ScopeClosedError && error.cause instanceof RuntimeDisposedError,
    `the app rejected with ${error}`,
  );
  // Idempotent: later calls resolve and change nothing.
  await runtime[Symbol.asyncDispose]();
  await runtime[Symbol.asyncDispose]();
  assertEquals(runtime.stats().cancelled, 1);
  let promise: Promise<unknown> | undefined;
  try {
    promise = runtime.runApp(() => Promise.resolve());
  } catch (error) {
    throw new Error(`runApp threw synchronously: ${error}`);
  }
  await assertRejects(() => promise!, RuntimeDisposedError);
});

/** Asserts `call` rejects (not throws) with `ErrorClass`, message naming `names`. */
async function rejects(
  call: () => Promise<unknown>,
  ErrorClass: typeof TypeError | typeof RangeError,
  ...names: string[]
) {
  let promise: Promise<unknown>;
  try {
    promise = call();
  } catch (error) {
    throw new Error(`threw synchronously instead of rejecting: ${error}`);
  }
  const error = await assertRejects(() => promise, ErrorClass);
  for (const name of names) assertStringIncludes(error.message, name);
}

Deno.test("bad input at every AppL method is reported and changes nothing", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  const notAFunction = 42 as unknown as () => number;
  const options = (value: unknown) => value as { timeoutMs: number };
  await rejects(() => runtime.runApp(notAFunction as never), TypeError, "runApp");
  await rejects(
    () => runtime.runApp(() => Promise.resolve(), { failFast: "yes" } as never),
    TypeError,
    "failFast",
  );
  await runtime.runApp(async (app: AppL) => {
    const held = await app.forkProcess((lang) => lang.delay(10));
    const before = runtime.stats();
    const fork = app.forkProcess.bind(app);
    await rejects(() => fork(notAFunction), TypeError, "process", "42");
    await rejects(() => fork(() => 1, options({ timeoutMs: -1 })), RangeError, "timeoutMs", "-1");
    await rejects(() => fork(() => 1, options({ timeoutMs: NaN })), RangeError, "timeoutMs");
    await rejects(() => fork(() => 1, options({ timeoutMs: "5" })), TypeError, "timeoutMs");
    await rejects(() => fork(() => 1, options({ signal: {} })), TypeError, "signal");
    await rejects(() => fork(() => 1, options({ name: 7 })), TypeError, "name");
    await rejects(() => fork(() => 1, options("fast")), TypeError, "options");
    assertThrows(() => app.tryForkProcess(notAFunction), TypeError, "process");
    assertThrows(
      () => app.tryForkProcess(() => 1, options({ timeoutMs: -5 })),
      RangeError,
      "timeoutMs",
    );
    await rejects(() => app.awaitResult(held, options({ timeoutMs: -1 })), RangeError, "timeoutMs");
    await rejects(() => app.awaitResult(held, options({ signal: "x" })), TypeError, "signal");
    await rejects(() => app.forkAll(null as never, (n) => n), TypeError, "items");
    await rejects(() => app.forkAll([1], notAFunction as never), TypeError, "process");
    await rejects(
      () => app.forkAll([1], (n) => n, options({ timeoutMs: -1 })),
      RangeError,
      "timeoutMs",
    );
    await rejects(() => app.evalLang(notAFunction), TypeError, "evalLang");
    await rejects(() => app.scope(notAFunction as never), TypeError, "scope");
    await rejects(
      () => app.scope(() => Promise.resolve(), { failFast: 1 } as never),
      TypeError,
      "failFast",
    );
    assertEquals(runtime.stats(), before);
    assertEquals(await app.awaitResult(held), undefined);
    // No process id was spent on a refused call.
    assertEquals((await app.forkProcess(() => {})).id, 2);
  });
});
