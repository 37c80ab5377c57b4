// The fifo hand-off path stays optimised from one burst to the next. A store
// or a read that V8 first runs after it has optimised a function (the wait
// line or a scope's running list running dry at the end of a burst) has no
// type feedback and deoptimises that function and whatever it was inlined
// into; the stop and admission bookkeeping then ran unoptimised through the
// whole next burst, about 1 µs of every hand-off (BENCHMARKS.md, "The warm
// hand-off after d802da8"). A child process runs two bursts under
// `--trace-deopt --trace-opt`; the V8 trace names each deoptimised function,
// and each function optimised before the second burst: if none of the path
// had been optimised by then (a later tier-up, a changed trace format), no
// deopt could show and the check below would pass for nothing.
import { assertEquals } from "@std/assert";
import { assertOptimisedBefore, deoptTrace } from "./_deopt_trace.ts";

const FIXTURE = new URL("./fixtures/handoff_bursts.ts", import.meta.url);

/** Functions of the release → grant → admission path (and the queue under it). */
const HAND_OFF_PATH = new Set([
  "push",
  "remove",
  "shift",
  "release",
  "announceStop",
  "processStopped",
  // A process that returns with nobody else to tell stops here, not in stop
  // (5b03e82), and release is inlined into it: with compilation on V8's main
  // thread, d802da8's release reverted deoptimised only returned.
  "returned",
  "admitForked",
  "forkedReturned",
  "workEnded",
  "slotGranted",
  "stop",
]);

Deno.test("fifo hand-off", async (t) => {
  await t.step("no function of its path deoptimises for want of type feedback", async () => {
    const trace = await deoptTrace(FIXTURE);
    assertOptimisedBefore(trace, "secondBurst", [...HAND_OFF_PATH], 2);
    const deopts = [
      ...trace.matchAll(
        /reason: (Insufficient type feedback[^)]*)\): begin\. deoptimizing \S+ <JSFunction (\S+)/g,
      ),
    ].map(([, reason, name]) => `${name}: ${reason}`)
      .filter((entry) => HAND_OFF_PATH.has(entry.slice(0, entry.indexOf(":"))));
    assertEquals(deopts, []);
  });
});
