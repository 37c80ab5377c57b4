// The pool itself (API.md points 1–3): the bound, when a slot comes back, how
// forks wait under fifo and backoff, how a wait is withdrawn, tryForkProcess.
// Backoff's sleep schedule has its own file, backoff_test.ts.
import {
  assert,
  assertEquals,
  assertFalse,
  assertInstanceOf,
  assertRejects,
  assertStrictEquals,
} from "@std/assert";
import { backoff, fifo, Runtime, ScopeClosedError, type WaitPolicy } from "../mod.ts";
import { createTestRuntime, VirtualClock } from "../testing.ts";

/** One macrotask turn: lets every queued microtask run. */
const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

const policies: [string, WaitPolicy][] = [
  ["fifo", fifo()],
  ["backoff", backoff({ initialMs: 1, maxMs: 8 })],
];

Deno.test("stats().active never exceeds maxProcesses", async (t) => {
  for (const [label, wait] of policies) {
    for (const max of [1, 3]) {
      await t.step(`${label}, maxProcesses ${max}, 50 concurrent forks`, async () => {
        await using runtime = createTestRuntime({ maxProcesses: max, wait, seed: 11 });
        let peak = 0;
        const sample = () => {
          const { active, waiting } = runtime.stats();
          peak = Math.max(peak, active);
          assert(active <= max, `active ${active} > ${max}`);
          assert(active + waiting <= 50);
        };
        await runtime.runApp(async (app) => {
          const forks = Array.from({ length: 50 }, () =>
            app.forkProcess(async (lang) => {
              sample();
              await lang.delay(lang.getRandomInt(1, 5));
              sample();
            }));
          sample();
          for (const handle of await Promise.all(forks)) await app.awaitResult(handle);
        });
        assertEquals(peak, max);
        assertEquals(runtime.stats(), {
          max,
          active: 0,
          waiting: 0,
          started: 50,
          succeeded: 50,
          failed: 0,
          cancelled: 0,
        });
      });
    }
  }
});

Deno.test("a process that ignores cancellation keeps its slot until it ends", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  const gate = Promise.withResolvers<void>();
  await runtime.runApp(async (app) => {
    const stubborn = await app.forkProcess(async () => {
      await gate.promise;
      return "late";
    });
    stubborn.cancel("stop");
    let nextRan = false;
    const next = app.forkProcess(() => {
      nextRan = true;
    });
    next.catch(() => {}); // keeps a failed assertion's report readable
    await turn();
    await turn();
    assertEquals(stubborn.status, "running");
    assertEquals([runtime.stats().active, runtime.stats().waiting], [1, 1]);
    assertFalse(nextRan);
    gate.resolve();
    await app.awaitResult(await next);
    assert(nextRan);
    assertEquals(await app.awaitResult(stubborn), "late");
  });
});

Deno.test("the slot is free and the status final before a waiter resumes", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await t.step("awaitResult of a success", () =>
    runtime.runApp(async (app) => {
      const handle = await app.forkProcess(async (lang) => {
        await lang.delay(5);
        return 1;
      });
      assertEquals(await app.awaitResult(handle), 1);
      assertEquals(handle.status, "succeeded");
      assertEquals(runtime.stats().active, 0);
      assertEquals(runtime.stats().succeeded, 1);
    }));
  await t.step("awaitResult of a failure", () =>
    runtime.runApp(async (app) => {
      const handle = await app.forkProcess(async (lang) => {
        await lang.delay(5);
        throw new Error("boom");
      });
      try {
        await app.awaitResult(handle);
        throw new Error("awaitResult should have rejected");
      } catch {
        assertEquals(handle.status, "failed");
        assertEquals(runtime.stats().active, 0);
        assertEquals(runtime.stats().failed, 1);
      }
    }));
  await t.step("asyncDispose of the handle", () =>
    runtime.runApp(async (app) => {
      const handle = await app.forkProcess((lang) => lang.delay(1_000));
      await handle[Symbol.asyncDispose]();
      assertEquals(handle.status, "cancelled");
      assertEquals(runtime.stats().active, 0);
      assertEquals(runtime.stats().cancelled, 1);
    }));
});

Deno.test("fifo: forks wait at capacity, start in order, and get the slot by hand-off", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  const holderGate = Promise.withResolvers<void>();
  const queuedGate = Promise.withResolvers<void>();
  const order: number[] = [];
  await runtime.runApp(async (app) => {
    const holder = await app.forkProcess(() => holderGate.promise);
    const resolved: number[] = [];
    const queued = [0, 1, 2, 3, 4].map((i) => {
      const fork = app.forkProcess(async () => {
        order.push(i);
        await queuedGate.promise;
      });
      fork.then(() => resolved.push(i), () => {});
      return fork;
    });
    await turn();
    assertEquals(resolved, []);
    assertEquals(runtime.stats().waiting, 5);
    assertEquals(runtime.stats().started, 1);
    holderGate.resolve();
    await app.awaitResult(holder);
    // The freed slot went straight to the longest waiter: none is free for a newcomer.
    assertEquals(order, [0]);
    assertEquals(app.tryForkProcess(() => {}), undefined);
    assertEquals([runtime.stats().active, runtime.stats().waiting], [1, 4]);
    queuedGate.resolve();
    for (const fork of queued) await app.awaitResult(await fork);
  });
  assertEquals(order, [0, 1, 2, 3, 4]);
});

Deno.test("a waiting fork is withdrawn by its signal", async (t) => {
  for (const [label, wait] of policies) {
    await t.step(label, async () => {
      const virtual = new VirtualClock();
      await using runtime = new Runtime({ maxProcesses: 1, wait, clock: virtual });
      const gate = Promise.withResolvers<void>();
      await runtime.runApp(async (app) => {
        const holder = await app.forkProcess(() => gate.promise);
        const controller = new AbortController();
        let ran = false;
        const pending = app.forkProcess(() => {
          ran = true;
        }, { signal: controller.signal });
        assertEquals(runtime.stats().waiting, 1);
        const reason = new Error("no longer needed");
        controller.abort(reason);
        assertStrictEquals(await assertRejects(() => pending), reason);
        assertEquals(runtime.stats().waiting, 0);
        assertEquals(virtual.pending, 0, "a withdrawn backoff waiter must stop sleeping");
        gate.resolve();
        await app.awaitResult(holder);
        // No queue entry survived to take the freed slot.
        assertEquals(runtime.stats().active, 0);
        assertFalse(ran);
        assertEquals(runtime.stats().started, 1);
      });
    });
  }
});

Deno.test("a fork signal leaves no abort listener behind once the process stopped", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  const controller = new AbortController();
  const signal = controller.signal;
  let live = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<typeof add>) => {
    live++;
    add(...args);
  }) as typeof add;
  signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    live--;
    remove(...args);
  }) as typeof remove;
  const gate = Promise.withResolvers<void>();
  await runtime.runApp(async (app) => {
    const holder = await app.forkProcess(() => gate.promise);
    const queued = app.forkProcess(() => "done", { signal });
    gate.resolve();
    assertEquals(await app.awaitResult(await queued), "done");
    await app.awaitResult(holder);
  });
  assertEquals(live, 0);
});

Deno.test("an already-aborted fork signal rejects at once and starts nothing", async () => {
  await using runtime = new Runtime({ maxProcesses: 2 });
  const reason = new Error("too late");
  await runtime.runApp(async (app) => {
    let ran = false;
    const fork = app.forkProcess(() => {
      ran = true;
    }, { signal: AbortSignal.abort(reason) });
    assertStrictEquals(await assertRejects(() => fork), reason);
    assertFalse(ran);
  });
  assertEquals(runtime.stats().started, 0);
});

Deno.test("cancelling its scope withdraws a waiting fork with ScopeClosedError", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  const gate = Promise.withResolvers<void>();
  await runtime.runApp(async (app) => {
    const holder = await app.forkProcess(() => gate.promise);
    let withdrawn: unknown;
    const bodyError = new Error("inner body failed");
    const inner = app.scope(async (scope) => {
      scope.forkProcess(() => {}).catch((error) => withdrawn = error);
      await turn();
      assertEquals(runtime.stats().waiting, 1);
      throw bodyError;
    });
    assertStrictEquals(await assertRejects(() => inner), bodyError);
    assertInstanceOf(withdrawn, ScopeClosedError);
    assertEquals(runtime.stats().waiting, 0);
    gate.resolve();
    await app.awaitResult(holder);
  });
  assertEquals(runtime.stats().started, 1);
});
