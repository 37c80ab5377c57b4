// Determinism across threads (W3): on a test runtime with a seed, a program
// mixing ordinary processes and worker processes of both kinds gives the same
// results, logs and trace on every run, and a worker script's virtual hour
// passes in well under a second of real time.
import { assert, assertEquals } from "@std/assert";
import type { LangL } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

const scripts = new URL("./workers/scripts.ts", import.meta.url);

async function program(seed: number) {
  await using runtime = createTestRuntime({ maxProcesses: 4, workers: 2, seed });
  const results = await runtime.runApp(async (app) => {
    const tally = app.newVar<number[]>([]);
    const local = async (lang: LangL) => {
      let total = 0;
      for (let round = 0; round < 3; round++) {
        await lang.delay(10 * lang.getRandomInt(1, 5) + 5);
        const size = lang.getRandomInt(1, 100);
        total += size;
        lang.logInfo("process {id} saw {size}", { id: lang.processId, size });
        await lang.modifyVar(tally, (all) => [...all, size]);
      }
      return total;
    };
    const handles = [
      await app.forkWorker<unknown, number>(scripts, { tally, id: 1 }, { export: "observe" }),
      await app.forkProcess(local),
      await app.forkWorker<unknown, number>(scripts, { tally, id: 3 }, {
        export: "observe",
        isolation: "process",
      }),
      await app.forkProcess(local),
      await app.forkWorker<unknown, number>(scripts, { tally, id: 5 }, { export: "observe" }),
    ];
    const totals = await Promise.all(handles.map((h) => app.awaitResult(h)));
    return { totals, tally: await app.evalLang((lang) => lang.readVar(tally)) };
  });
  return {
    results,
    logs: runtime.logs.map((e) => [e.processId, e.message, e.properties, e.time]),
    trace: runtime.trace.map((e) => [e.processId, e.op, e.time]),
    end: runtime.clock.now(),
  };
}

Deno.test("a seeded program mixing forkProcess and forkWorker runs the same twice", async () => {
  const first = await program(42);
  const second = await program(42);
  assertEquals(second, first);
  assertEquals(first.results.tally.length, 15);
  assert(first.trace.some(([, op]) => op === "getRandomInt"), "worker draws are traced");
  const other = await program(43);
  assert(JSON.stringify(other.results) !== JSON.stringify(first.results), "the seed matters");
});

Deno.test("a virtual hour inside a worker script takes well under a second", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, workers: 1, seed: 1 });
  // Warm workers: starting a Deno child process is not what this measures.
  await runtime.runApp(async (app) => {
    await app.awaitResult(await app.forkWorker(scripts, 1));
    await app.awaitResult(await app.forkWorker(scripts, 1, { isolation: "process" }));
  });
  for (const isolation of ["thread", "process"] as const) {
    const start = performance.now();
    const clockStart = runtime.clock.now();
    const woke = await runtime.runApp(async (app) =>
      app.awaitResult(await app.forkWorker(scripts, null, { export: "hour", isolation }))
    );
    const took = performance.now() - start;
    assertEquals(woke, clockStart + 3_600_000);
    assert(took < 1_000, `${isolation}: a virtual hour took ${took} ms`);
  }
});
