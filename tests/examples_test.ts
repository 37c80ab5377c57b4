// The examples' domain code, run on the test interpreter: the same functions
// the command lines run on the system clock take a virtual hour here, finish
// at once and give the same numbers on every run. Then the command lines
// themselves, spawned with small sizes.
import { assert, assertEquals, assertGreaterOrEqual, assertLessOrEqual } from "@std/assert";
import { createTestRuntime, type TestRuntime } from "../testing.ts";
import {
  DEMO_SKY,
  MeteorBurnedUpError,
  watchMeteors,
  type WatchOptions,
} from "../examples/meteors.ts";
import { type ObservationReport, observeForever, type Pace } from "../examples/astronomer.ts";
import { interruptAfter } from "./_interrupt.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

// The demo's own sizes: 5 bursts of 4 meteors, 0.2 s apart, 4 telescopes.
const DEMO_NIGHT: WatchOptions = { bursts: 5, burst: 4, intervalMs: 200, sky: DEMO_SKY };

const HOUR_PACE: Pace = { minMs: MINUTE, maxMs: 5 * MINUTE };

async function demoNight(seed: number, options = DEMO_NIGHT) {
  await using runtime = createTestRuntime({ maxProcesses: 4, seed });
  const stats = () => runtime.stats();
  const report = await runtime.runApp((app) => watchMeteors(app, { ...options, stats }));
  return { report, ...recorded(runtime) };
}

function recorded(runtime: TestRuntime) {
  return {
    now: runtime.clock.now(),
    stats: runtime.stats(),
    logs: [...runtime.logs],
    trace: [...runtime.trace],
  };
}

async function observationHour(seed: number) {
  await using runtime = createTestRuntime({ maxProcesses: 4, seed });
  let highest = 0;
  const stats = () => {
    const s = runtime.stats();
    highest = Math.max(highest, s.active);
    return s;
  };
  const stop = new AbortController();
  const report: ObservationReport = await runtime.runApp(async (app) => {
    const observing = observeForever(app, { signal: stop.signal, stats, pace: HOUR_PACE });
    await app.evalLang((lang) => lang.delay(HOUR));
    stop.abort(new Error("an hour has passed"));
    return await observing;
  });
  return { report, highest, ...recorded(runtime) };
}

Deno.test("meteors: the demo's night on the test runtime", async (t) => {
  await t.step("finishes at once with the pinned results for seed 7", async () => {
    const started = performance.now();
    const { report, now, stats, logs, trace } = await demoNight(7);
    // Seconds of virtual time; real time is a few milliseconds (bound loosely: noisy CI).
    assertLessOrEqual(performance.now() - started, 2_000);
    assertEquals(now, 2_888);
    const { catalogue, ...counts } = report;
    // At the fifth burst 12 forks were waiting for one of the 4 slots.
    assertEquals(counts, { meteors: 20, measured: 19, burnedUp: 1, peakWaiting: 12 });
    assertEquals(catalogue[0], { size: 68, seenAt: 371, by: 1 });
    assertEquals(stats, {
      max: 4,
      active: 0,
      waiting: 0,
      started: 20,
      succeeded: 19,
      failed: 1,
      cancelled: 0,
    });
    // Every burnt-up meteor logged one warning, every recorded one a debug line.
    assertEquals(logs.filter((l) => l.level === "warning").length, counts.burnedUp);
    assertEquals(logs.filter((l) => l.level === "debug").length, counts.measured);
    assertEquals(trace.length, 142);
  });

  await t.step("the forks queue: every meteor is watched, the line drains", async () => {
    const { report, stats } = await demoNight(99);
    const { meteors, measured, burnedUp, peakWaiting, catalogue } = report;
    assertEquals(meteors, DEMO_NIGHT.bursts * DEMO_NIGHT.burst);
    assertEquals(measured + burnedUp, meteors);
    assertEquals(catalogue.length, measured);
    // Nothing is refused: every arrival got a process, most after a wait.
    assertEquals(stats.started, meteors);
    assertGreaterOrEqual(peakWaiting, DEMO_NIGHT.burst);
    assertEquals(stats.waiting, 0);
    for (const meteor of catalogue) assert(meteor.size >= 1 && meteor.size <= 100);
    assertEquals(new Set(catalogue.map((m) => m.by)).size, measured);
  });

  await t.step("the same seed gives the same results, logs and trace", async () => {
    const first = await demoNight(7);
    const second = await demoNight(7);
    assertEquals(second, first);
  });

  await t.step("burnt-up meteors are counted, not lost: the app resolves", async () => {
    const sky = { ...DEMO_SKY, failRate: 1 };
    const { report, stats, logs } = await demoNight(5, { ...DEMO_NIGHT, sky });
    assertEquals(report.measured, 0);
    assertEquals(report.burnedUp, report.meteors);
    assertEquals(stats.failed, report.meteors);
    assertEquals(logs.filter((l) => l.level === "warning").length, report.meteors);
  });

  await t.step("MeteorBurnedUpError names the process", () => {
    assertEquals(new MeteorBurnedUpError(7).message, "the meteor watched by process 7 burned up");
  });
});

Deno.test("astronomer: an endless loop held at the bound for a virtual hour", async (t) => {
  await t.step("forks only as fast as slots free, pinned for seed 2024", async () => {
    const started = performance.now();
    const { report, highest, now, stats, trace } = await observationHour(2024);
    assertLessOrEqual(performance.now() - started, 2_000);
    assertEquals(report, { forked: 86, completed: 82, peakActive: 4 });
    assertEquals(highest, 4);
    assertEquals(now, HOUR);
    // The four observations running at the stop were cancelled, not failed.
    assertEquals(stats, {
      max: 4,
      active: 0,
      waiting: 0,
      started: 86,
      succeeded: 82,
      failed: 0,
      cancelled: 4,
    });
    assertEquals(trace.length, 514);
  });

  await t.step("the same seed gives the same run", async () => {
    assertEquals(await observationHour(2024), await observationHour(2024));
    assertEquals((await observationHour(7)).report.forked, 83);
  });

  await t.step("a signal aborted before the start forks nothing", async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const report = await runtime.runApp((app) =>
      observeForever(app, { signal: AbortSignal.abort(), stats: () => runtime.stats() })
    );
    assertEquals(report, { forked: 0, completed: 0, peakActive: 0 });
    assertEquals(runtime.stats().started, 0);
  });
});

// ---- the command lines -------------------------------------------------------

const decoder = new TextDecoder();

function example(name: string, args: string[]): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-env", new URL(`../examples/${name}`, import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  });
}

async function run(name: string, args: string[]) {
  const { code, stdout, stderr } = await example(name, args).output();
  return { code, out: decoder.decode(stdout), err: decoder.decode(stderr) };
}

function summary(out: string): Record<string, number> {
  const line = out.match(/^watched .*$/m)?.[0];
  if (line === undefined) throw new Error(`no summary line in:\n${out}`);
  const number = (pattern: RegExp) => Number(line.match(pattern)?.[1]);
  return {
    meteors: number(/watched (\d+) meteors/),
    measured: number(/measured (\d+)/),
    burnedUp: number(/burned up (\d+)/),
    peakWaiting: number(/at most (\d+) waited/),
  };
}

Deno.test("examples/meteors.ts runs from the command line", async (t) => {
  await t.step("small run: forks wait in line, the summary adds up", async () => {
    const args = ["--bursts", "2", "--burst", "6", "--max", "3", "--interval-ms", "10"];
    const { code, out, err } = await run("meteors.ts", [...args, "--seed", "1"]);
    assertEquals(code, 0, err);
    assert(out.startsWith("12 meteors arrive, 6 every 0.01 s; each is watched"), out);
    const { meteors, measured, burnedUp, peakWaiting } = summary(out);
    assertEquals(meteors, 12);
    assertEquals(measured + burnedUp, 12);
    // The first burst of 6 finds 3 telescopes: at least 3 forks wait.
    assertGreaterOrEqual(peakWaiting, 3);
    // Not a terminal: no carriage returns or ANSI codes, the last progress line is final.
    assert(!out.includes("\r") && !out.includes("\x1b["), JSON.stringify(out));
    assert(/^active 0\/3 {2}waiting 0 {2}done \d+ {2}failed \d+$/m.test(out), out);
  });

  await t.step("every meteor burns up: failures are counted, exit code 0", async () => {
    const args = ["--bursts", "1", "--burst", "4", "--max", "2", "--interval-ms", "10"];
    const { code, out, err } = await run("meteors.ts", [...args, "--fail-rate", "1"]);
    assertEquals(code, 0, err);
    assertEquals(summary(out), { meteors: 4, measured: 0, burnedUp: 4, peakWaiting: 2 });
    assertEquals(err.match(/burned up before it was measured/g)?.length, 4, err);
  });

  await t.step("a bad flag is a usage error with exit code 2", async () => {
    const { code, err } = await run("meteors.ts", ["--bursts", "0"]);
    assertEquals(code, 2);
    assertEquals(err.trim(), 'error: --bursts must be an integer >= 1, got "0"');
  });
});

Deno.test("examples/astronomer.ts runs from the command line", async (t) => {
  await t.step("stops after --seconds, never above the bound", async () => {
    const { code, out, err } = await run("astronomer.ts", ["--seconds", "0.3", "--max", "3"]);
    assertEquals(code, 0, err);
    assert(out.includes("stopped after 0."), out);
    assert(out.includes("time is up (0.3 s)"), out);
    assert(out.includes("peak active 3 of 3: the loop never exceeded the bound"), out);
  });

  await t.step("stops cleanly on SIGINT (Ctrl-C)", async () => {
    // The listener is installed before the first line is printed.
    const { out, code, err } = await interruptAfter(
      example("astronomer.ts", ["--seconds", "60", "--max", "2"]).spawn(),
      /observing/,
    );
    assertEquals(code, 0, err);
    assert(out.includes("interrupted (Ctrl-C)"), out);
    assert(out.includes("of 2: the loop never exceeded the bound"), out);
  });
});
