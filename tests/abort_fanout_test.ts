// Queued forks that share one AbortSignal share one abort listener, so that
// aborting n of them is linear (Deno's removeEventListener scans a list:
// one listener per fork made it quadratic), and none is left behind.
import { assertEquals, assertInstanceOf, assertStrictEquals } from "@std/assert";
import { Runtime, ScopeClosedError } from "../mod.ts";
import { trackListeners } from "./_listeners.ts";

const N = 1_000;

Deno.test("a thousand queued forks with one signal hold one abort listener", async (t) => {
  await t.step("an abort withdraws them all, in order, and leaves no listener", async () => {
    await using runtime = new Runtime({ maxProcesses: 1 });
    await runtime.runApp(async (app) => {
      const gate = Promise.withResolvers<void>();
      const holder = await app.forkProcess(() => gate.promise);
      const controller = new AbortController();
      const listeners = trackListeners(controller.signal, true);
      const rejected: number[] = [];
      const forks = Array.from(
        { length: N },
        (_, i) =>
          app.forkProcess(() => i, { signal: controller.signal }).catch((reason) => {
            rejected.push(i);
            return reason;
          }),
      );
      assertEquals(listeners.size, 1);
      const reason = new Error("stop");
      controller.abort(reason);
      assertEquals(runtime.stats().waiting, 0);
      for (const outcome of await Promise.all(forks)) assertStrictEquals(outcome, reason);
      assertEquals(rejected, Array.from({ length: N }, (_, i) => i));
      assertEquals(listeners.size, 0);
      gate.resolve();
      await app.awaitResult(holder);
    });
  });

  await t.step("forks that get their slot leave; the last one removes the listener", async () => {
    await using runtime = new Runtime({ maxProcesses: 2 });
    const controller = new AbortController();
    const listeners = trackListeners(controller.signal);
    await runtime.runApp(async (app) => {
      const gate = Promise.withResolvers<void>();
      const holders = [
        await app.forkProcess(() => gate.promise),
        await app.forkProcess(() => gate.promise),
      ];
      const forks = Array.from(
        { length: 10 },
        (_, i) => app.forkProcess(() => i, { signal: controller.signal }),
      );
      assertEquals(listeners.size, 1);
      gate.resolve();
      for (const holder of holders) await app.awaitResult(holder);
      const results = [];
      for (const fork of forks) results.push(await app.awaitResult(await fork));
      assertEquals(results, Array.from({ length: 10 }, (_, i) => i));
    });
    assertEquals(listeners.size, 0);
  });

  await t.step("a scope's cancellation withdraws them; forks of other scopes stay", async () => {
    await using runtime = new Runtime({ maxProcesses: 1 });
    const controller = new AbortController();
    const signal = controller.signal;
    const listeners = trackListeners(signal);
    await runtime.runApp(async (app) => {
      const gate = Promise.withResolvers<void>();
      const holder = await app.forkProcess(() => gate.promise);
      const outer = Array.from({ length: 3 }, (_, i) => app.forkProcess(() => i, { signal }));
      let inner: Promise<unknown>[] = [];
      const cancelled = app.scope((scope) => {
        inner = Array.from({ length: N }, () => scope.forkProcess(() => -1, { signal }));
        return Promise.reject(new Error("inner body failed"));
      }).catch((e) => e);
      assertEquals((await cancelled).message, "inner body failed");
      for (const fork of inner) assertInstanceOf(await fork.catch((e) => e), ScopeClosedError);
      assertEquals(listeners.size, 1, "the outer forks still wait with the signal");
      assertEquals(runtime.stats().waiting, 3);
      gate.resolve();
      await app.awaitResult(holder);
      for (const [i, fork] of outer.entries()) assertEquals(await app.awaitResult(await fork), i);
    });
    assertEquals(listeners.size, 0);
  });

  await t.step(
    "forks of two runtimes share the listener and each leaves its own pool",
    async () => {
      await using a = new Runtime({ maxProcesses: 1 });
      await using b = new Runtime({ maxProcesses: 1 });
      const controller = new AbortController();
      const signal = controller.signal;
      const listeners = trackListeners(signal, true);
      const gate = Promise.withResolvers<void>();
      const run = (runtime: Runtime) =>
        runtime.runApp(async (app) => {
          const holder = await app.forkProcess(() => gate.promise);
          const forks = Array.from({ length: 5 }, () => app.forkProcess(() => 0, { signal }));
          await Promise.allSettled(forks);
          await app.awaitResult(holder);
          return forks;
        });
      const runs = [run(a), run(b)];
      await new Promise((resolve) => setTimeout(resolve, 0));
      assertEquals(listeners.size, 1);
      assertEquals([a.stats().waiting, b.stats().waiting], [5, 5]);
      controller.abort(new Error("both"));
      assertEquals([a.stats().waiting, b.stats().waiting], [0, 0]);
      gate.resolve();
      await Promise.all(runs);
      assertEquals(listeners.size, 0);
    },
  );
});
