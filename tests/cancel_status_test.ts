// A process's status once cancellation is requested (API.md point 4): it
// stays running until the process stops, and how it stops decides the
// outcome; a cancel that comes after a throw does not hide the failure.
// (What awaitResult delivers for each outcome: await_result_test.ts.)
import { assertEquals, assertInstanceOf, assertRejects, assertStrictEquals } from "@std/assert";
import { ProcessCancelledError, ProcessFailedError, Runtime } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

/** One macrotask turn: lets every queued microtask run. */
const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

Deno.test("status after cancel() stays running until the process stops", async (t) => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  await t.step(
    "cancel, then return: succeeded with the value",
    () =>
      runtime.runApp(async (app) => {
        const gate = Promise.withResolvers<void>();
        const handle = await app.forkProcess(async () => {
          await gate.promise;
          return "finished anyway";
        });
        handle.cancel();
        await turn();
        assertEquals(handle.status, "running");
        gate.resolve();
        assertEquals(await app.awaitResult(handle), "finished anyway");
        assertEquals(handle.status, "succeeded");
      }),
  );
  await t.step("cancel, then throw: cancelled, not failed", async () => {
    const before = runtime.stats();
    const value = await runtime.runApp(async (app) => {
      const gate = Promise.withResolvers<void>();
      const handle = await app.forkProcess(async () => {
        await gate.promise;
        throw new Error("stopping as asked");
      });
      handle.cancel("stop");
      await turn();
      assertEquals(handle.status, "running");
      gate.resolve();
      const error = await assertRejects(() => app.awaitResult(handle), ProcessCancelledError);
      assertEquals(error.cause, "stop");
      assertEquals(handle.status, "cancelled");
      return "scope ok";
    });
    assertEquals(value, "scope ok");
    assertEquals(runtime.stats().cancelled, before.cancelled + 1);
    assertEquals(runtime.stats().failed, before.failed);
  });
  await t.step(
    "throwing without a cancel request is a failure",
    () =>
      runtime.runApp(async (app) => {
        const handle = await app.forkProcess(() => {
          throw new Error("plain failure");
        });
        await assertRejects(() => app.awaitResult(handle), ProcessFailedError);
        assertEquals(handle.status, "failed");
      }),
  );
});

Deno.test("the fork signal cancels the process once it runs", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await runtime.runApp(async (app) => {
    const controller = new AbortController();
    const handle = await app.forkProcess((lang) => lang.delay(1_000), {
      signal: controller.signal,
    });
    controller.abort("user left");
    const error = await assertRejects(() => app.awaitResult(handle), ProcessCancelledError);
    assertEquals(error.cause, "user left");
    assertEquals(handle.status, "cancelled");
    assertEquals(runtime.clock.now(), 0);
  });
  assertEquals(runtime.stats().active, 0);
});

Deno.test("a cancel that arrives after the process threw does not hide its failure", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  await t.step("a handle cancelled after the throw", async () => {
    const boom = new Error("already thrown");
    await runtime.runApp(async (app) => {
      // tryForkProcess hands the handle back before procpool has seen the throw.
      const handle = app.tryForkProcess(() => {
        throw boom;
      })!;
      handle.cancel("too late");
      const error = await app.awaitResult(handle).catch((e) => e);
      assertInstanceOf(error, ProcessFailedError);
      assertStrictEquals(error.cause, boom);
      assertEquals(handle.status, "failed");
    });
  });
  await t.step("forkAll: the second failure is not passed off as a cancellation", async () => {
    const before = runtime.stats();
    const error = await runtime.runApp(async (app) => {
      await app.forkAll([1, 2], (i) => {
        throw new Error(`item ${i}`);
      }).catch(() => {});
      return "the body handled forkAll's rejection";
    }).catch((e) => e);
    // forkAll reported item 1; item 2's failure nobody saw, so the scope reports it.
    assertInstanceOf(error, ProcessFailedError);
    assertEquals((error.cause as Error).message, "item 2");
    assertEquals(runtime.stats().failed - before.failed, 2);
    assertEquals(runtime.stats().cancelled - before.cancelled, 0);
  });
});
