// Scopes (API.md point 5): a scope ends only when all its work has, never
// loses a failure, cancels its work when the body throws, and with failFast
// stops at the first failure.
import {
  assert,
  assertEquals,
  assertFalse,
  assertInstanceOf,
  assertRejects,
  assertStrictEquals,
  assertThrows,
} from "@std/assert";
import {
  type AppL,
  ProcessFailedError,
  Runtime,
  type RuntimeLogger,
  ScopeClosedError,
} from "../mod.ts";
import { createTestRuntime, VirtualClock } from "../testing.ts";

/** One macrotask turn: lets every queued microtask run. */
const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

Deno.test("a scope joins all its work when the body returns, queued forks included", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  const done: number[] = [];
  const value = await runtime.runApp((app) => {
    for (const i of [0, 1, 2]) {
      app.forkProcess(async (lang) => {
        await lang.delay(10);
        done.push(i);
      });
    }
    return Promise.resolve("body returned at once");
  });
  assertEquals(value, "body returned at once");
  assertEquals(done, [0, 1, 2]);
  assertEquals(runtime.clock.now(), 30);
  assertEquals(runtime.stats().active, 0);
  assertEquals(runtime.stats().waiting, 0);
});

Deno.test("failures are never lost", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  await t.step("one unobserved failure rejects the scope with it", async () => {
    const thrown = new Error("lost?");
    const error = await assertRejects(
      () =>
        runtime.runApp(async (app) => {
          await app.forkProcess(async (lang) => {
            await lang.delay(1);
            throw thrown;
          });
          return "ignored";
        }),
      ProcessFailedError,
    );
    assertStrictEquals(error.cause, thrown);
  });
  await t.step("two unobserved failures reject with an AggregateError", async () => {
    const error = await assertRejects(
      () =>
        runtime.runApp(async (app) => {
          for (const message of ["first", "second"]) {
            await app.forkProcess(() => {
              throw new Error(message);
            });
          }
        }),
      AggregateError,
    );
    assertEquals(error.errors.length, 2);
    for (const inner of error.errors) assertInstanceOf(inner, ProcessFailedError);
    const causes = error.errors.map((inner: ProcessFailedError) => (inner.cause as Error).message);
    assertEquals(causes.sort(), ["first", "second"]);
  });
  await t.step("an observed failure does not reject the scope", async () => {
    const value = await runtime.runApp(async (app) => {
      const handle = await app.forkProcess(() => {
        throw new Error("seen");
      });
      await assertRejects(() => app.awaitResult(handle), ProcessFailedError);
      return "handled";
    });
    assertEquals(value, "handled");
  });
  await t.step("cancellations and fork timeouts are not failures", async () => {
    const value = await runtime.runApp(async (app) => {
      const cancelled = await app.forkProcess((lang) => lang.delay(1_000));
      cancelled.cancel();
      await app.forkProcess((lang) => lang.delay(1_000), { timeoutMs: 5 });
      return "fine";
    });
    assertEquals(value, "fine");
  });
});

Deno.test("when the body throws, running processes are cancelled and awaited first", async () => {
  await using runtime = new Runtime({ maxProcesses: 3, clock: new VirtualClock() });
  const gate = Promise.withResolvers<void>();
  const bodyError = new Error("body failed");
  let sawCancel = false;
  let stopped = false;
  let inner: Promise<string> | undefined;
  let handle: { status: string } | undefined;
  const app = runtime.runApp(async (app) => {
    handle = await app.forkProcess(async (lang) => {
      try {
        await lang.delay(1_000);
      } catch (error) {
        sawCancel = true;
        await gate.promise; // slow cleanup: the scope must wait for it
        stopped = true;
        throw error;
      }
    });
    // A child whose body returned normally keeps its value when cancelled from outside.
    inner = app.scope(async (child) => {
      await child.forkProcess((lang) => lang.delay(1_000));
      return "inner value";
    });
    await turn();
    throw bodyError;
  });
  let settled = false;
  app.then(() => settled = true, () => settled = true);
  await turn();
  await turn();
  assert(sawCancel);
  assertFalse(settled);
  assertEquals(handle?.status, "running");
  gate.resolve();
  assertStrictEquals(await assertRejects(() => app), bodyError);
  assert(stopped);
  assertEquals(handle?.status, "cancelled");
  assertEquals(await inner, "inner value");
  assertEquals(runtime.stats().active, 0);
  assertEquals(runtime.stats().cancelled, 2);
});

Deno.test("unobserved failures are logged at error level when the body threw", async () => {
  const errors: Record<string, unknown>[] = [];
  const logger: RuntimeLogger = {
    isEnabledFor: () => true,
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: (_message, properties) => errors.push(properties ?? {}),
  };
  await using runtime = new Runtime({ maxProcesses: 1, logger });
  const bodyError = new Error("body failed");
  const rejected = await assertRejects(() =>
    runtime.runApp(async (app) => {
      await app.forkProcess(() => {
        throw new Error("nobody looked");
      });
      await turn();
      throw bodyError;
    })
  );
  assertStrictEquals(rejected, bodyError);
  assertEquals(errors.length, 1);
  assertInstanceOf(errors[0].error, ProcessFailedError);
});

Deno.test("failFast: the first failure cancels the rest of the scope", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const boom = new Error("boom");
  let awaitError: unknown;
  let queuedError: unknown;
  let signalAborted = false;
  let sibling: { status: string } | undefined;
  const error = await assertRejects(
    () =>
      runtime.runApp(async (app) => {
        await app.forkProcess(async (lang) => {
          await lang.delay(10);
          throw boom;
        });
        const slow = sibling = await app.forkProcess((lang) => lang.delay(1_000));
        app.forkProcess(() => "never").then(
          () => queuedError = "the queued fork got a slot",
          (error) => queuedError = error,
        );
        try {
          await app.awaitResult(slow);
        } catch (error) {
          awaitError = error;
        }
        signalAborted = app.signal.aborted;
        throw new Error("the body gives up as a consequence");
      }, { failFast: true }),
    ProcessFailedError,
  );
  assertStrictEquals(error.cause, boom);
  assertInstanceOf(awaitError, ScopeClosedError);
  assert(signalAborted);
  assertEquals(sibling?.status, "cancelled");
  assertEquals(runtime.clock.now(), 10);
  // The slot freed by the failing process must not start the pending fork.
  assertInstanceOf(queuedError, ScopeClosedError);
  assertEquals(runtime.stats().started, 2);
});

Deno.test("failFast rejects with the failure even when the body returns normally", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const boom = new Error("boom");
  const error = await assertRejects(
    () =>
      runtime.runApp(async (app) => {
        const failing = await app.forkProcess(() => {
          throw boom;
        });
        await app.forkProcess((lang) => lang.delay(1_000));
        await turn();
        return failing.status;
      }, { failFast: true }),
    ProcessFailedError,
  );
  assertStrictEquals(error.cause, boom);
  assertEquals(runtime.clock.now(), 0);
});

Deno.test("an app is closed once its scope ended", async () => {
  await using runtime = new Runtime({ maxProcesses: 2 });
  let captured: AppL | undefined;
  const handle = await runtime.runApp(async (app) => {
    captured = app;
    const handle = await app.forkProcess(() => 1);
    await app.awaitResult(handle);
    return handle;
  });
  const app = captured!;
  const started = runtime.stats().started;
  const asyncCalls: [string, () => Promise<unknown>][] = [
    ["forkProcess", () => app.forkProcess(() => 1)],
    ["awaitResult", () => app.awaitResult(handle)],
    ["forkAll", () => app.forkAll([1], (n) => n)],
    ["evalLang", () => app.evalLang(() => 1)],
    ["scope", () => app.scope(() => Promise.resolve(1))],
  ];
  for (const [name, call] of asyncCalls) {
    let promise: Promise<unknown> | undefined;
    try {
      promise = call();
    } catch (error) {
      throw new Error(`${name} threw synchronously: ${error}`);
    }
    await assertRejects(() => promise!, ScopeClosedError);
  }
  assertThrows(() => app.tryForkProcess(() => 1), ScopeClosedError);
  assertThrows(() => app.newVar(0), ScopeClosedError);
  assertEquals(runtime.stats().started, started);
});

Deno.test("nested scopes", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  await t.step("the parent waits for a child scope it did not await", async () => {
    let done = false;
    let innerValue: string | undefined;
    await runtime.runApp((app) => {
      app.scope(async (child) => {
        await child.forkProcess(async (lang) => {
          await lang.delay(50);
          done = true;
        });
        return "inner";
      }).then((value) => innerValue = value);
      return Promise.resolve();
    });
    assert(done);
    assertEquals(innerValue, "inner");
    assertEquals(runtime.clock.now(), 50);
  });
  await t.step("a child's unobserved failure rejects the child, not the parent", async () => {
    const value = await runtime.runApp(async (app) => {
      const error = await assertRejects(
        () =>
          app.scope(async (child) => {
            await child.forkProcess(() => {
              throw new Error("inner failure");
            });
          }),
        ProcessFailedError,
      );
      assertEquals((error.cause as Error).message, "inner failure");
      return "parent fine";
    });
    assertEquals(value, "parent fine");
  });
});
