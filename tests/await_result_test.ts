// awaitResult (API.md point 4): what each outcome delivers, and what bounds
// only the wait. (How a process's status moves once cancellation is
// requested: cancel_status_test.ts.)
import { assertEquals, assertInstanceOf, assertRejects, assertStrictEquals } from "@std/assert";
import {
  AwaitTimeoutError,
  ProcessCancelledError,
  ProcessFailedError,
  type ProcessHandle,
  ProcessTimeoutError,
  Runtime,
  ScopeClosedError,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

Deno.test("a succeeded process gives the same value on every call", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const value = { answer: 42 };
  await runtime.runApp(async (app) => {
    const handle = await app.forkProcess(async (lang) => {
      await lang.delay(3);
      return value;
    });
    assertStrictEquals(await app.awaitResult(handle), value);
    assertStrictEquals(await app.awaitResult(handle), value);
    assertEquals(handle.status, "succeeded");
  });
});

Deno.test("a failed process rejects with ProcessFailedError carrying the thrown value", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const thrown = new Error("disk on fire");
  await runtime.runApp(async (app) => {
    await app.forkProcess(() => {}); // so the failing process is not id 1 by accident
    const handle = await app.forkProcess(async (lang) => {
      await lang.delay(1);
      throw thrown;
    });
    const error = await assertRejects(() => app.awaitResult(handle), ProcessFailedError);
    assertStrictEquals(error.cause, thrown);
    assertEquals(error.processId, handle.id);
    assertEquals(handle.id, 2);
    assertEquals(handle.status, "failed");
    // Observed once, still reported on the next call.
    await assertRejects(() => app.awaitResult(handle), ProcessFailedError);
  });
  assertEquals(runtime.stats().failed, 1);
});

Deno.test("a cancelled process rejects with ProcessCancelledError (cause = reason)", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  await runtime.runApp(async (app) => {
    const handle = await app.forkProcess((lang) => lang.delay(1_000));
    handle.cancel("not needed");
    const error = await assertRejects(() => app.awaitResult(handle), ProcessCancelledError);
    assertEquals(error.cause, "not needed");
    assertEquals(handle.status, "cancelled");
    assertEquals(runtime.clock.now(), 0);
  });
  assertEquals(runtime.stats().cancelled, 1);
  assertEquals(runtime.stats().failed, 0);
});

Deno.test("a fork timeoutMs cancels the process with ProcessTimeoutError", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await t.step("the process is cancelled at timeoutMs", () =>
    runtime.runApp(async (app) => {
      const handle = await app.forkProcess((lang) => lang.delay(1_000), { timeoutMs: 100 });
      const error = await assertRejects(() => app.awaitResult(handle), ProcessTimeoutError);
      assertInstanceOf(error, ProcessCancelledError);
      assertEquals(error.timeoutMs, 100);
      assertEquals(handle.status, "cancelled");
      assertEquals(runtime.clock.now(), 100);
    }));
  await t.step(
    "it counts from when the process takes its slot",
    () =>
      runtime.runApp(async (app) => {
        const start = runtime.clock.now();
        await app.forkProcess((lang) => lang.delay(50));
        const late = await app.forkProcess((lang) => lang.delay(80).then(() => "made it"), {
          timeoutMs: 100,
        });
        assertEquals(await app.awaitResult(late), "made it");
        assertEquals(runtime.clock.now() - start, 130);
      }),
  );
  await t.step("timeoutMs Infinity means no limit", () =>
    runtime.runApp(async (app) => {
      const handle = await app.forkProcess((lang) => lang.delay(1e9).then(() => "slow"), {
        timeoutMs: Infinity,
      });
      assertEquals(await app.awaitResult(handle), "slow");
    }));
});

Deno.test("an await timeoutMs bounds only the wait", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await runtime.runApp(async (app) => {
    const handle = await app.forkProcess((lang) => lang.delay(100).then(() => "done"));
    const error = await assertRejects(
      () => app.awaitResult(handle, { timeoutMs: 10 }),
      AwaitTimeoutError,
    );
    assertEquals(runtime.clock.now(), 10);
    assertEquals(handle.status, "running");
    assertEquals(error.processId, handle.id);
    assertEquals(await app.awaitResult(handle), "done");
    assertEquals(runtime.clock.now(), 100);
  });
  assertEquals(runtime.stats().succeeded, 1);
});

Deno.test("an await signal bounds only the wait and rejects with its reason", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await t.step("aborted while waiting", () =>
    runtime.runApp(async (app) => {
      const handle = await app.forkProcess((lang) => lang.delay(100).then(() => "done"));
      const controller = new AbortController();
      const waiting = app.awaitResult(handle, { signal: controller.signal });
      const reason = new Error("gave up");
      controller.abort(reason);
      assertStrictEquals(await assertRejects(() => waiting), reason);
      assertEquals(handle.status, "running");
      assertEquals(await app.awaitResult(handle), "done");
    }));
  await t.step("already aborted", () =>
    runtime.runApp(async (app) => {
      const handle = await app.forkProcess((lang) => lang.delay(100).then(() => "done"));
      const reason = new Error("never mind");
      const error = await assertRejects(() =>
        app.awaitResult(handle, { signal: AbortSignal.abort(reason) })
      );
      assertStrictEquals(error, reason);
      assertEquals(await app.awaitResult(handle), "done");
    }));
});

Deno.test("awaitResult refuses handles it does not know, by rejecting", async (t) => {
  await using other = new Runtime({ maxProcesses: 1 });
  const foreign = await other.runApp(async (app) => {
    const handle = await app.forkProcess(() => 1);
    await app.awaitResult(handle);
    return handle;
  });
  await using runtime = new Runtime({ maxProcesses: 1 });
  await runtime.runApp(async (app) => {
    await t.step("a handle from another runtime", async () => {
      await assertRejects(() => app.awaitResult(foreign), TypeError, "another runtime");
    });
    const fakes: [string, unknown][] = [
      ["undefined", undefined],
      ["null", null],
      ["a number", 1],
      ["a look-alike object", { id: 1, name: undefined, status: "running", cancel() {} }],
    ];
    for (const [label, fake] of fakes) {
      await t.step(label, async () => {
        let promise: Promise<unknown> | undefined;
        try {
          promise = app.awaitResult(fake as ProcessHandle<unknown>);
        } catch (error) {
          throw new Error(`awaitResult threw synchronously: ${error}`);
        }
        await assertRejects(() => promise!, TypeError, "handle");
      });
    }
  });
});

Deno.test("several awaits on one process: those that give up leave the others waiting", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await runtime.runApp(async (app) => {
    const slow = await app.forkProcess(async (lang) => {
      await lang.delay(1_000);
      return "seen";
    });
    const waits = [
      app.awaitResult(slow, { timeoutMs: 10 }), // the first waiter gives up first
      app.awaitResult(slow),
      app.awaitResult(slow, { timeoutMs: 20 }),
      app.awaitResult(slow),
    ].map((wait) => wait.catch((e) => e));
    const outcomes = await Promise.all(waits);
    assertInstanceOf(outcomes[0], AwaitTimeoutError);
    assertInstanceOf(outcomes[2], AwaitTimeoutError);
    assertEquals([outcomes[1], outcomes[3]], ["seen", "seen"]);
    assertEquals(runtime.clock.now(), 1_000);
  });
});

Deno.test("awaits from the process's own scope and from a nested one: a scope's end rejects only its own", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await runtime.runApp(async (app) => {
    const slow = await app.forkProcess(async (lang) => {
      await lang.delay(100);
      return "done";
    });
    // The nested scope's await comes first, and is still its scope's: only
    // an await from the process's own scope is settled by the process itself
    // (the first of them; the second is a listed wait).
    let inner: Promise<unknown> | undefined;
    const nested = app.scope((child) => {
      inner = child.awaitResult(slow).catch((e) => e);
      return Promise.reject(new Error("the nested body failed"));
    });
    const own = [app.awaitResult(slow), app.awaitResult(slow)];
    await assertRejects(() => nested, Error, "the nested body failed");
    assertInstanceOf(await inner, ScopeClosedError);
    assertEquals(slow.status, "running");
    assertEquals(await Promise.all(own), ["done", "done"]);
    assertEquals(runtime.clock.now(), 100);
  });
});
