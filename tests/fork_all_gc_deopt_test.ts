// forkAll stays optimised across a full GC between batches. V8 reaches the
// hidden class of a class's instances from the class only through weak
// links: a full GC that finds no item record drops it, and throws away every
// optimised function that checks for it ("embedded weak objects cleared"),
// so each batch after such a GC ran from unoptimised code (BENCHMARKS.md,
// "forkAll after 6d497a9"). A child process runs batches with a GC between
// them under `--trace-deopt --trace-opt`; the V8 trace names each function
// thrown away, and each optimised before the first GC.
import { assertEquals } from "@std/assert";
import { assertOptimisedBefore, deoptTrace, droppedWithMaps } from "./_deopt_trace.ts";

const FIXTURE = new URL("./fixtures/fork_all_gcs.ts", import.meta.url);
const RUNTIMES_FIXTURE = new URL("./fixtures/fork_all_runtimes.ts", import.meta.url);

/** Functions of an item's admission, start and stop. */
const ITEM_PATH = new Set([
  "admit",
  "admitItem",
  "announceStop",
  "invokeInLane",
  "itemStopped",
  "processStopped",
  "push",
  "resume",
  "resumeAfterGrant",
  "returned",
  "returnedInLane",
  "slotGranted",
  "startNext",
  "stop",
  "stopInLane",
  "stopReturned",
]);

Deno.test("forkAll", async (t) => {
  await t.step("a full GC between batches throws away none of an item's path", async () => {
    const trace = await deoptTrace(FIXTURE, ["--expose-gc"]);
    assertOptimisedBefore(trace, "firstFullGc", [...ITEM_PATH], 2);
    const dropped = droppedWithMaps(trace).filter((name) => ITEM_PATH.has(name));
    assertEquals(dropped, []);
  });

  await t.step("a batch in a new runtime after a full GC deoptimises none of it", async () => {
    // Each of these deoptimised some of the path in every new runtime's
    // first batch: the debug gate's first ask (admitItem), a live-items
    // table made by `fill` (add, place), the start queue's first stores
    // growing its array (push); and, in the second batch, the first batch's
    // end (checkFinished's reads).
    const trace = await deoptTrace(RUNTIMES_FIXTURE, ["--expose-gc"]);
    assertOptimisedBefore(trace, "firstBatchDone", [...ITEM_PATH], 2);
    const after = trace.slice(trace.search(/completed compiling \S+ <JSFunction firstBatchDone /));
    const deopts = [
      ...after.matchAll(/reason: ([^)]*)\): begin\. deoptimizing \S+ <JSFunction (\S+)/g),
    ].map(([, reason, name]) => `${name}: ${reason}`);
    assertEquals(deopts, []);
  });
});
