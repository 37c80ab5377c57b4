// fork+await's code stays optimised across a full GC between runs. V8 drops
// a class's hidden class ("map") at a full GC that finds no instance of it,
// and with it every function optimised for it ("embedded weak objects
// cleared" under `--trace-deopt`): the handle's and the forked record's were
// dropped at the GC before each run, and each run started from unoptimised
// code (BENCHMARKS.md, "fork+await after `98e1147`"). A child process runs three
// runs with a forced GC before each; the V8 trace names each function thrown
// away, and each optimised before the second run's GC.
import { assertEquals } from "@std/assert";
import { deoptTrace, droppedWithMaps, optimisedBefore } from "./_deopt_trace.ts";

const FIXTURE = new URL("./fixtures/fork_await_runs.ts", import.meta.url);

/** Compiled on their own during the first run in every traced run. */
const OPTIMISED_FIRST = ["awaitResult", "handleFor", "recordOf"];

Deno.test("fork+await across full GCs", async (t) => {
  await t.step("no function is thrown away for a map the GC dropped", async () => {
    const trace = await deoptTrace(FIXTURE, ["--expose-gc"]);
    const optimised = optimisedBefore(trace, "firstFullGc");
    assertEquals(OPTIMISED_FIRST.filter((name) => !optimised.has(name)), []);
    const thrownAway = droppedWithMaps(trace);
    assertEquals([...new Set(thrownAway)].sort(), []);
  });
});
