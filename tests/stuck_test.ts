// A test runtime whose program can make no progress (API.md rule 11): no busy
// loop, and runApp rejects with StuckError naming what each process and body
// waits for; processes that cannot stop keep their slots, dispose resolves.
import { assert, assertEquals, assertInstanceOf, assertRejects } from "@std/assert";
import process from "node:process";
import { type AppL, ProcessCancelledError } from "../mod.ts";
import {
  createTestRuntime,
  StuckError,
  type TestRuntime,
  type TestRuntimeOptions,
} from "../testing.ts";
import { stuckAfterOption } from "../src/testing/test_runtime.ts";

const never = () => new Promise<never>(() => {});

/** A test runtime that gives up after `ms` (100) of real quiet instead of 1 s. */
function quickRuntime(options: Partial<TestRuntimeOptions> = {}, ms = 100): TestRuntime {
  return createTestRuntime({
    maxProcesses: 2,
    seed: 1,
    ...options,
    [stuckAfterOption]: ms,
  } as TestRuntimeOptions);
}

async function stuck(runtime: TestRuntime, body: (app: AppL) => Promise<unknown>) {
  const error = await assertRejects(() => runtime.runApp(body), StuckError);
  return error as StuckError;
}

Deno.test("a stuck program rejects with StuckError instead of spinning", async (t) => {
  await t.step("a process whose promise never settles, awaited by the body", async () => {
    const runtime = quickRuntime();
    let signal: AbortSignal | undefined;
    const error = await stuck(runtime, async (app) => {
      const h = await app.forkProcess((lang) => (signal = lang.signal, never()), {
        name: "waiter",
      });
      await app.awaitResult(h);
    });
    assertEquals(error.waits, [
      "process 1 (waiter): waits for nothing procpool knows of " +
      "(a promise only code outside the runtime could settle?)",
      "runApp's body: waits for the result of process 1 (waiter)",
    ]);
    assert(error.message.includes("- process 1 (waiter): waits for nothing"));
    // It was cancelled, cannot stop, and keeps its slot; dispose still resolves.
    assertInstanceOf(signal!.reason, ProcessCancelledError);
    assertEquals((signal!.reason as Error).cause, error);
    assertEquals(runtime.stats().active, 1);
    await runtime[Symbol.asyncDispose]();
    assertEquals(runtime.stats().active, 1);
  });

  await t.step("forkAll's items are listed with the forks, in the order they started", async () => {
    // A batch keeps its running items itself, not in its scope's list.
    await using runtime = quickRuntime({ maxProcesses: 4 });
    const error = await stuck(runtime, async (app) => {
      await app.forkProcess(never, { name: "before" });
      const all = app.forkAll([0, 1], never, { name: "item" });
      await app.forkProcess(never, { name: "after" });
      await all;
    });
    const nothing = "waits for nothing procpool knows of " +
      "(a promise only code outside the runtime could settle?)";
    assertEquals(error.waits, [
      `process 1 (before): ${nothing}`,
      `process 2 (item[0]): ${nothing}`,
      `process 3 (item[1]): ${nothing}`,
      `process 4 (after): ${nothing}`,
      "runApp's body: waits for no process result " +
      "(for a slot? an evalLang script? a promise from outside?)",
    ]);
  });

  await t.step("a lock held by a process that never ends, and a slot", async () => {
    await using runtime = quickRuntime({ maxProcesses: 2 });
    let waiter: { status: string } | undefined;
    const error = await stuck(runtime, async (app) => {
      const v = app.newVar(0);
      await app.forkProcess((lang) => lang.modifyVar(v, never));
      const handle = await app.forkProcess((lang) => lang.readVar(v));
      waiter = handle;
      const queued = app.forkProcess(() => 1); // no slot left
      queued.catch(() => {});
      await Promise.all([queued, app.awaitResult(handle)]);
    });
    assertEquals(error.waits, [
      "process 1: waits for nothing procpool knows of " +
      "(a promise only code outside the runtime could settle?)",
      "process 2: waits for SharedVar 1's lock, held by process 1",
      "runApp's body: waits for the result of process 2",
      "1 fork waits for a slot; all 2 are held by process 1, process 2",
    ]);
    // The lock waiter could stop, so it did, and freed its slot.
    assertEquals(waiter?.status, "cancelled");
    assertEquals(runtime.stats().active, 1);
    assertEquals(runtime.stats().waiting, 0);
  });

  await t.step("a body awaiting something that never comes", async () => {
    await using runtime = quickRuntime();
    const error = await stuck(runtime, async (app) => {
      await app.scope(async () => await never());
    });
    assertEquals(error.waits, [
      "runApp's body: waits for no process result " +
      "(for a slot? an evalLang script? a promise from outside?)",
    ]);
  });

  await t.step("the runtime runs the next app with the slots that are left", async () => {
    await using runtime = quickRuntime({ maxProcesses: 2 });
    await stuck(runtime, async (app) => void await app.forkProcess(never));
    const results = await runtime.runApp((app) =>
      app.forkAll([1, 2, 3], async (n, lang) => (await lang.delay(n), lang.now()))
    );
    assertEquals(results, [1, 3, 6]); // one slot left: the items ran one after another
  });

  await t.step("cleanup with a shielded evalIO still runs after the stuck cancel", async () => {
    await using runtime = quickRuntime();
    const cleaned: string[] = [];
    const error = await stuck(runtime, async (app) => {
      const v = app.newVar(0);
      await app.forkProcess((lang) => lang.modifyVar(v, never));
      await app.forkProcess(async (lang) => {
        try {
          await lang.readVar(v);
        } finally {
          await lang.evalIO(async () => {
            await new Promise((resolve) => setTimeout(resolve, 5));
            cleaned.push("released");
          }, { shielded: true });
        }
      });
    });
    assertEquals(cleaned, ["released"]);
    assertEquals(error.waits.length, 2); // the two processes; the body had returned
    assertEquals(runtime.stats().cancelled, 1);
  });
});

Deno.test("waiting on real work outside the runtime is not stuck while it moves on", async () => {
  // Each real wait is shorter than the window, all of them together longer.
  await using runtime = quickRuntime({}, 250);
  const results = await runtime.runApp(async (app) => {
    const out: number[] = [];
    for (let i = 0; i < 4; i++) {
      // 80 ms of real time, outside the runtime, each followed by activity.
      await new Promise((resolve) => setTimeout(resolve, 80));
      out.push(await app.evalLang(async (lang) => (await lang.delay(10), lang.now())));
    }
    return out;
  });
  assertEquals(results, [10, 20, 30, 40]);
});

Deno.test("a stuck program is detected after about a second, without a busy loop", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  await assertRejects(
    () => runtime.runApp(async (app) => void await app.forkProcess(never)),
    StuckError,
  );
  const realMs = performance.now() - start;
  const cpu = process.cpuUsage();
  const cpuMs = (cpu.user - cpuBefore.user + cpu.system - cpuBefore.system) / 1000;
  console.log(`stuck after ${realMs.toFixed(0)} ms of real time, ${cpuMs.toFixed(0)} ms of CPU`);
  assert(realMs >= 950 && realMs < 10_000, `took ${realMs} ms`);
  // A spinning loop would use about as much CPU as real time.
  assert(cpuMs < realMs / 3, `used ${cpuMs} ms of CPU in ${realMs} ms`);
});

Deno.test("the stuck cancel does not run the app's listeners as LangL code", async () => {
  await using runtime = quickRuntime();
  let seen: string | undefined;
  await stuck(runtime, async (app) => {
    app.signal.addEventListener("abort", () => {
      try {
        app.newVar(0);
      } catch (error) {
        seen = (error as Error).name;
      }
    });
    await app.forkProcess(async (lang) => {
      // The loop goes quiet, then this script's delay wakes it from inside the script.
      await new Promise((resolve) => setTimeout(resolve, 20));
      await lang.delay(5);
      await never();
    });
  });
  assertEquals(seen, "ScopeClosedError");
});
