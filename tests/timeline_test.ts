// The timeline recorder's Chrome trace-event JSON: well formed, balanced,
// in time order per track, its counters equal to stats(), and reproducible.
import { assert, assertEquals, assertThrows } from "@std/assert";
import {
  type AppL,
  type ChromeTrace,
  type ChromeTraceEvent,
  type PoolStats,
  type ProcessHandle,
  Runtime,
  TimelineRecorder,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

/** Checks what Perfetto needs; returns the problems found. */
function problems(trace: ChromeTrace): string[] {
  const found: string[] = [];
  const open = new Map<string, string[]>();
  const lastTs = new Map<string, number>();
  for (const [index, event] of trace.traceEvents.entries()) {
    const where = `event ${index} ${JSON.stringify(event)}`;
    for (const field of ["name", "ph", "ts", "pid", "tid"] as const) {
      if (event[field] === undefined) found.push(`${where}: no ${field}`);
    }
    if (!Number.isFinite(event.ts)) found.push(`${where}: ts not a number`);
    if (event.ph === "M") continue;
    const track = event.ph === "b" || event.ph === "e"
      ? `${event.pid}/${event.cat}/${event.id}`
      : event.ph === "C"
      ? `${event.pid}/counter ${event.name}`
      : `${event.pid}/${event.tid}`;
    if ((event.ph === "b" || event.ph === "e") && event.id === undefined) {
      found.push(`${where}: async slice without id`);
    }
    if (event.ph === "C" && typeof event.args?.[event.name] !== "number") {
      found.push(`${where}: counter without its value`);
    }
    const previous = lastTs.get(track) ?? -Infinity;
    if (event.ts < previous) found.push(`${where}: goes back in time on ${track}`);
    lastTs.set(track, event.ts);
    if (event.ph === "B" || event.ph === "b") {
      open.set(track, [...(open.get(track) ?? []), event.name]);
    } else if (event.ph === "E" || event.ph === "e") {
      const stack = open.get(track) ?? [];
      const name = stack.pop();
      if (name === undefined) found.push(`${where}: end without begin on ${track}`);
      else if (name !== event.name) found.push(`${where}: ends ${name}`);
    }
  }
  for (const [track, stack] of open) {
    if (stack.length > 0) found.push(`${track}: ${stack.length} slices never end`);
  }
  return found;
}

function lastCounter(trace: ChromeTrace, name: string): number | undefined {
  const counters = trace.traceEvents.filter((event) => event.ph === "C" && event.name === name);
  return counters.at(-1)?.args?.[name] as number | undefined;
}

/** A program with waits, a hand-off, a failure, a cancel, a timeout and logs. */
async function program(app: AppL, sample: () => void): Promise<void> {
  const handles: ProcessHandle<unknown>[] = [];
  for (let i = 0; i < 6; i++) {
    handles.push(
      await app.forkProcess(async (lang) => {
        lang.logInfo("worker {i} starts", { i });
        await lang.delay(lang.getRandomInt(100, 5_000));
        if (i === 3) throw new Error("worker 3 gives up");
        return i;
      }, { name: `worker ${i}` }),
    );
    sample();
  }
  const slow = await app.forkProcess((lang) => lang.delay(60_000), {
    name: "slow",
    timeoutMs: 500,
  });
  const victim = await app.forkProcess((lang) => lang.delay(60_000), { name: "victim" });
  sample();
  victim.cancel(new Error("not needed"));
  for (const handle of [...handles, slow, victim]) {
    await app.awaitResult(handle).catch(() => {});
    sample();
  }
  await app.forkAll([1, 2, 3, 4, 5], async (n, lang) => {
    await lang.delay(n * 250);
  }, { name: "batch" });
  sample();
}

async function record(seed: number, capacity = 100_000) {
  const recorder = new TimelineRecorder({ capacity });
  await using runtime = createTestRuntime({ maxProcesses: 3, seed, recorder });
  const samples: { trace: ChromeTrace; stats: PoolStats }[] = [];
  const sample = () => samples.push({ trace: recorder.toJSON(), stats: runtime.stats() });
  await runtime.runApp((app) => program(app, sample));
  const json = JSON.stringify(recorder);
  return { recorder, samples, json, stats: runtime.stats(), end: runtime.clock.now() };
}

Deno.test("TimelineRecorder on the test runtime", async (t) => {
  const { recorder, samples, json, stats, end } = await record(42);
  const trace: ChromeTrace = JSON.parse(json);
  const events = trace.traceEvents;

  await t.step("well formed: fields, balanced slices, time order per track", () => {
    assertEquals(problems(trace), []);
    assertEquals(trace.displayTimeUnit, "ms");
    assertEquals(recorder.dropped, 0);
    for (const sample of samples) assertEquals(problems(sample.trace), []);
  });

  await t.step("one slice per process, on at most maxProcesses slot tracks", () => {
    const slices = events.filter((event) => event.ph === "B");
    assertEquals(slices.length, stats.started);
    const tracks = new Set(slices.map((event) => event.tid));
    assert(tracks.size <= 3 && tracks.size > 0, [...tracks].join());
    const names = events.filter((e) => e.ph === "M" && e.name === "thread_name")
      .map((e) => e.args?.name);
    for (const tid of tracks) assert(names.includes(`slot ${tid}`));
    const ends = events.filter((event) => event.ph === "E").map((event) => event.args?.outcome);
    assertEquals(ends.filter((o) => o === "failed").length, 1);
    assertEquals(ends.filter((o) => o === "cancelled").length, 2);
  });

  await t.step("the wait queue: async slices, granted ones carry on into a process", () => {
    const waits = events.filter((event) => event.cat === "procpool.wait");
    const begun = waits.filter((event) => event.ph === "b").length;
    assert(begun > 0);
    assertEquals(waits.filter((event) => event.ph === "e").length, begun);
  });

  await t.step("instants for logs, the failure, the cancel and the timeout", () => {
    const instants = events.filter((event) => event.ph === "i").map((event) => event.name);
    assertEquals(instants.filter((name) => name === "log info").length, 6);
    assertEquals(instants.filter((name) => name === "failed").length, 1);
    assertEquals(instants.filter((name) => name === "cancel").length, 1);
    assertEquals(instants.filter((name) => name === "timeout").length, 1);
  });

  await t.step("the counters equal stats() at every sampled instant", () => {
    assert(samples.length > 10);
    for (const { trace, stats } of samples) {
      assertEquals(lastCounter(trace, "active"), stats.active);
      assertEquals(lastCounter(trace, "waiting"), stats.waiting);
    }
    assertEquals(lastCounter(trace, "active"), 0);
  });

  await t.step("virtual time: simulated seconds, in microseconds", () => {
    const last = Math.max(...events.map((event) => event.ts));
    assertEquals(last, end * 1000);
    assert(end >= 1_000, `${end}`);
  });

  await t.step("the same seed gives the same JSON", async () => {
    assertEquals((await record(42)).json, json);
    assert((await record(43)).json !== json);
  });
});

Deno.test("TimelineRecorder keeps the last events within its capacity", async () => {
  const { recorder, json } = await record(42, 50);
  const trace: ChromeTrace = JSON.parse(json);
  assert(recorder.dropped > 0);
  const recorded = trace.traceEvents.filter((event: ChromeTraceEvent) => event.ph !== "M");
  // The ring's 50, less ends whose begin was let go, plus ends for slices left open.
  assert(recorded.length <= 50 + 3, `${recorded.length}`);
  assertEquals(problems(trace), []);
});

Deno.test("TimelineRecorder on a real runtime", async () => {
  const recorder = new TimelineRecorder();
  await using runtime = new Runtime({ maxProcesses: 2, recorder });
  let running: ChromeTrace | undefined;
  await runtime.runApp(async (app) => {
    await app.forkAll([1, 2, 3, 4], (n, lang) => lang.delay(n));
    const handle = await app.forkProcess((lang) => lang.delay(1), { name: "last" });
    running = recorder.toJSON();
    await app.awaitResult(handle);
  });
  const trace = recorder.toJSON();
  assertEquals(problems(trace), []);
  assertEquals(trace.traceEvents.filter((event) => event.ph === "B").length, 5);
  // A slice still open at export ends at the clock's now, marked unfinished.
  const unfinished = running!.traceEvents.filter((event) => event.args?.unfinished === true);
  assert(unfinished.some((event) => event.name === "last"));
  assertEquals(problems(running!), []);
});

Deno.test("TimelineRecorder rejects bad options", () => {
  assertThrows(() => new TimelineRecorder({ capacity: 0 }), RangeError, "capacity");
  assertThrows(
    () => new Runtime({ maxProcesses: 1, recorder: {} as TimelineRecorder }),
    TypeError,
    "recorder must be a TimelineRecorder",
  );
});
