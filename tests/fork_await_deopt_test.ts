// fork+await's code stays optimised across a full GC between runs. V8 drops
// a class's hidden class ("map") at a full GC that finds no instance of it,
// and with it every function optimised for it ("embedded weak objects
// cleared" under `--trace-deopt`): the handle's and the forked record's were
// dropped at the GC before each run, and each run started from unoptimised
// code (BENCHMARKS.md, "fork+await after `98e1147`"). A child process runs three
// runs with a forced GC before each; the V8 trace names each function thrown
// away, and each optimised before the second run's GC.
import { assertEquals } from "@std/assert";
import { assertOptimisedBefore, deoptTrace, droppedWithMaps } from "./_deopt_trace.ts";

const FIXTURE = new URL("./fixtures/fork_await_runs.ts", import.meta.url);

/** The fork+await path whose code the dropped maps threw away. */
const FORK_AWAIT_PATH = [
  "admitForked",
  "awaitedRecord",
  "awaitResult",
  "forkProcess",
  "handleFor",
  "runGranted",
  "scopeForkProcess",
];

Deno.test("fork+await across full GCs", async (t) => {
  await t.step("no function is thrown away for a map the GC dropped", async () => {
    const trace = await deoptTrace(FIXTURE, ["--expose-gc"]);
    assertOptimisedBefore(trace, "firstFullGc", FORK_AWAIT_PATH, 2);
    const thrownAway = droppedWithMaps(trace);
    assertEquals([...new Set(thrownAway)].sort(), []);
  });
});
