// The hard stop (W4), crashes (W6) and dispose (W5): a script that never
// yields is stopped by force after graceMs, a worker that dies outside the
// script fails its process with WorkerCrashedError, and either way a fresh
// worker takes the next fork. These run on the system clock: graceMs is real.
import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertNotEquals,
  assertRejects,
} from "@std/assert";
import { ProcessCancelledError, ProcessFailedError, Runtime, WorkerCrashedError } from "../mod.ts";

const scripts = new URL("./workers/scripts.ts", import.meta.url);
/** What this busy machine may add to graceMs before a killed process is reaped. */
const MARGIN_MS = 1_500;

// Deno asks for --allow-all to read /proc itself; a child process may.
function alive(pid: number): boolean {
  return new Deno.Command("test", { args: ["-d", `/proc/${pid}`] }).outputSync().success;
}

/** Deno names each Web Worker's thread "worker-N"; other threads come and go on their own. */
function threadCount(): number {
  const out = new Deno.Command("sh", {
    args: ["-c", `cat /proc/${Deno.pid}/task/*/comm`],
  }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").filter((name) =>
    name.startsWith("worker-")
  ).length;
}

Deno.test("a runaway script in a process worker is killed after graceMs and replaced", async () => {
  await using runtime = new Runtime({ maxProcesses: 2, workers: 1 });
  await runtime.runApp(async (app) => {
    const options = { isolation: "process", graceMs: 100 } as const;
    const first = await app.awaitResult(
      await app.forkWorker<null, number>(scripts, null, { ...options, export: "pid" }),
    );
    assert(alive(first));
    const spinning = await app.forkWorker(scripts, null, { ...options, export: "spin" });
    const start = performance.now();
    spinning.cancel("stop spinning");
    await assertRejects(() => app.awaitResult(spinning), ProcessCancelledError);
    const took = performance.now() - start;
    assert(took >= 100 && took < 100 + MARGIN_MS, `stopped after ${took} ms`);
    assertEquals(spinning.status, "cancelled");
    assertEquals(runtime.stats().active, 0, "its slot is free");
    assert(!alive(first), `OS process ${first} is gone`);
    const next = await app.awaitResult(
      await app.forkWorker<null, number>(scripts, null, { ...options, export: "pid" }),
    );
    assertNotEquals(next, first, "the next fork runs on a fresh worker");
  });
});

Deno.test("dispose kills a process worker whose script never yields", async () => {
  const runtime = new Runtime({ maxProcesses: 1, workers: 1 });
  let pid = 0;
  let spinning: { status: string } | undefined;
  const app = runtime.runApp(async (app) => {
    const options = { isolation: "process", graceMs: 50 } as const;
    pid = await app.awaitResult(
      await app.forkWorker<null, number>(scripts, null, { ...options, export: "pid" }),
    );
    spinning = await app.forkWorker(scripts, null, { ...options, export: "spin" });
    // The body waits until its scope is cancelled.
    await new Promise((resolve) => app.signal.addEventListener("abort", resolve));
  });
  app.catch(() => {});
  while (spinning === undefined) await new Promise((r) => setTimeout(r, 5));
  await runtime[Symbol.asyncDispose]();
  assertEquals(spinning.status, "cancelled");
  assert(!alive(pid), `OS process ${pid} is gone`);
});

Deno.test("a thread worker past graceMs is terminated and replaced", async () => {
  await using runtime = new Runtime({ maxProcesses: 2, workers: 1 });
  await runtime.runApp(async (app) => {
    // A loop that ends on its own (Deno does not stop one that never does).
    const looping = await app.forkWorker(scripts, 600, { export: "busy", graceMs: 50 });
    const start = performance.now();
    looping.cancel();
    await assertRejects(() => app.awaitResult(looping), ProcessCancelledError);
    assert(performance.now() - start < 550, "ended at graceMs, before the loop did");
    assertEquals(runtime.stats().active, 0);
    assertEquals(await app.awaitResult(await app.forkWorker(scripts, 2)), 4);
  });
});

for (const isolation of ["thread", "process"] as const) {
  Deno.test(`a worker that dies outside its script (${isolation}) fails its process with WorkerCrashedError`, async (t) => {
    await using runtime = new Runtime({ maxProcesses: 2, workers: 1 });
    const crash = async (script: string, input: unknown = null) => {
      const error = await runtime.runApp(async (app) => {
        const handle = await app.forkWorker(scripts, input, { export: script, isolation });
        return await assertRejects(() => app.awaitResult(handle), ProcessFailedError);
      });
      assertInstanceOf(error.cause, WorkerCrashedError);
      assertEquals(runtime.stats().active, 0);
      // Replaced: the next fork works.
      assertEquals(
        await runtime.runApp(async (app) =>
          app.awaitResult(await app.forkWorker(scripts, 5, { isolation }))
        ),
        10,
      );
      return error.cause as WorkerCrashedError;
    };
    await t.step("an uncaught error in a timer", async () => {
      const cause = await crash("throwInTimer");
      if (isolation === "thread") assert(cause.message.includes("boom in a timer"), cause.message);
    });
    if (isolation === "thread") {
      await t.step("the script closes its worker", async () => {
        const cause = await crash("closeSelf");
        assert(cause.message.includes("close()"), cause.message);
      });
    } else {
      await t.step("the script exits its OS process", async () => {
        const cause = await crash("exit", 3);
        assert(cause.message.includes("code 3"), cause.message);
      });
      await t.step(
        "it sends what the runtime cannot take: reported once it is reaped",
        async () => {
          const error = await runtime.runApp(async (app) => {
            const handle = await app.forkWorker(scripts, null, {
              export: "garbageFrame",
              isolation,
            });
            return await assertRejects(() => app.awaitResult(handle), ProcessFailedError);
          });
          assertInstanceOf(error.cause, WorkerCrashedError);
          const message = error.cause.message;
          assert(message.includes("could not take"), message);
          const pid = Number(/OS process (\d+)/.exec(message)?.[1]);
          assert(pid > 0 && !alive(pid), `OS process ${pid} still in the process table`);
        },
      );
      await t.step("its OS process is killed from outside", async () => {
        const error = await runtime.runApp(async (app) => {
          const pid = await app.awaitResult(
            await app.forkWorker<null, number>(scripts, null, { export: "pid", isolation }),
          );
          const handle = await app.forkWorker(scripts, 60_000, { export: "sleepy", isolation });
          Deno.kill(pid, "SIGKILL");
          return await assertRejects(() => app.awaitResult(handle), ProcessFailedError);
        });
        assertInstanceOf(error.cause, WorkerCrashedError);
        assert(error.cause.message.includes("SIGKILL"), error.cause.message);
      });
    }
  });
}

Deno.test("dispose stops every worker: no thread left, no child process alive", async () => {
  // Deno starts some threads of its own on the first worker: warm up first.
  {
    await using warm = new Runtime({ maxProcesses: 1, workers: 1 });
    await warm.runApp(async (app) => app.awaitResult(await app.forkWorker(scripts, 1)));
  }
  // Threads of earlier tests (a terminated worker finishing its loop) may still be exiting:
  // count once the number has held still for 200 ms.
  let before = threadCount();
  for (let still = 0, i = 0; still < 4 && i < 100; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const now = threadCount();
    still = now === before ? still + 1 : 0;
    before = now;
  }
  const runtime = new Runtime({ maxProcesses: 4, workers: 2 });
  const pids = await runtime.runApp(async (app) => {
    const handles = await Promise.all([
      app.forkWorker(scripts, 1),
      app.forkWorker(scripts, 2),
      app.forkWorker<null, number>(scripts, null, { export: "pid", isolation: "process" }),
      app.forkWorker<null, number>(scripts, null, { export: "pid", isolation: "process" }),
    ]);
    const results = await Promise.all(handles.map((h) => app.awaitResult(h)));
    return results.slice(2) as number[];
  });
  const during = threadCount();
  assert(pids.every(alive));
  await runtime[Symbol.asyncDispose]();
  let after = threadCount();
  // Terminated worker threads take a moment to exit.
  for (let i = 0; i < 200 && after > before; i++) {
    await new Promise((r) => setTimeout(r, 10));
    after = threadCount();
  }
  // A thread of an earlier test still exiting may go at any point (once
  // counted "1 before, 2 during"): compared with the count after dispose,
  // not before, the two worker threads are seen whenever that happens.
  assert(after <= before, `no worker thread left: ${before} before, ${after} after`);
  assert(
    during >= after + 2,
    `two worker threads while the runtime lived: ${during}, ${after} after`,
  );
  assert(!pids.some(alive), "no worker OS process left");
});
