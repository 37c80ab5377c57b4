// The examples' domain code, run on the test interpreter: the same functions
// the command lines run on the system clock take a virtual hour here, finish
// at once and give the same numbers on every run. Then the command lines
// themselves, spawned with small sizes.
import { assert, assertEquals, assertGreaterOrEqual, assertLessOrEqual } from "@std/assert";
import { createTestRuntime, type TestRuntime } from "../testing.ts";
import { collectMeteors, type CollectOptions, MeteorBurnedUpError } from "../examples/meteors.ts";
import { type ObservationReport, observeForever, type Pace } from "../examples/astronomer.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

// Bursts every 4 minutes for most of an hour; a meteor takes 1 to 8 minutes,
// so the bursts overlap and the pool refuses a varying share of each.
const HOUR_OF_METEORS: CollectOptions = {
  rounds: 14,
  burst: 6,
  intervalMs: 4 * MINUTE,
  sky: { minMs: MINUTE, maxMs: 8 * MINUTE, failRate: 0.1 },
};

const HOUR_PACE: Pace = { minMs: MINUTE, maxMs: 5 * MINUTE };

async function meteorHour(seed: number, options = HOUR_OF_METEORS) {
  await using runtime = createTestRuntime({ maxProcesses: 4, seed });
  const report = await runtime.runApp((app) => collectMeteors(app, options));
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

Deno.test("meteors: an hour of collection on the test runtime", async (t) => {
  await t.step("finishes at once with the pinned results for seed 7", async () => {
    const started = performance.now();
    const { report, now, stats, logs, trace } = await meteorHour(7);
    // An hour of virtual time; real time is a few milliseconds (bound loosely: noisy CI).
    assertLessOrEqual(performance.now() - started, 2_000);
    assertEquals(now, 3_518_251);
    const { catalogue, ...counts } = report;
    assertEquals(counts, { requested: 84, accepted: 39, refused: 45, collected: 33, failed: 6 });
    assertEquals(catalogue[0], { size: 22, mass: 814, seenAt: 62_676, by: 3 });
    assertEquals(catalogue.reduce((sum, m) => sum + m.mass, 0), 98_705);
    assertEquals(stats, {
      max: 4,
      active: 0,
      waiting: 0,
      started: 39,
      succeeded: 33,
      failed: 6,
      cancelled: 0,
    });
    // Every burnt-up meteor logged one warning, every recorded one a debug line.
    assertEquals(logs.filter((l) => l.level === "warning").length, 6);
    assertEquals(logs.filter((l) => l.level === "debug").length, 33);
    assertEquals(trace.length, 302);
  });

  await t.step("the counts add up and the catalogue is consistent", async () => {
    const { report } = await meteorHour(99);
    const { requested, accepted, refused, collected, failed, catalogue } = report;
    assertEquals(requested, HOUR_OF_METEORS.rounds * HOUR_OF_METEORS.burst);
    assertEquals(accepted + refused, requested);
    assertEquals(collected + failed, accepted);
    assertEquals(catalogue.length, collected);
    // The first burst finds an empty pool: exactly maxProcesses are accepted.
    assertGreaterOrEqual(accepted, 4);
    for (const meteor of catalogue) {
      assert(meteor.size >= 1 && meteor.size <= 100, `size ${meteor.size}`);
      assertEquals(meteor.mass % meteor.size, 0);
    }
    assertEquals(new Set(catalogue.map((m) => m.by)).size, collected);
  });

  await t.step("the same seed gives the same results, logs and trace", async () => {
    const first = await meteorHour(7);
    const second = await meteorHour(7);
    assertEquals(second, first);
    const other = await meteorHour(2024);
    assertEquals(other.report.accepted, 36);
    assertEquals(other.report.failed, 0);
  });

  await t.step("burnt-up meteors are counted, not lost: the app resolves", async () => {
    const sky = { minMs: MINUTE, maxMs: 2 * MINUTE, failRate: 1 };
    const { report, stats, logs } = await meteorHour(5, { ...HOUR_OF_METEORS, sky });
    assertEquals(report.collected, 0);
    assertEquals(report.failed, report.accepted);
    assertEquals(stats.failed, report.accepted);
    assertEquals(logs.filter((l) => l.level === "warning").length, report.accepted);
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

function counts(out: string): Record<string, number> {
  const line = out.match(/^requested .*$/m)?.[0];
  if (line === undefined) throw new Error(`no summary line in:\n${out}`);
  return Object.fromEntries(
    [...line.matchAll(/(\w+) (\d+)/g)].map(([, key, value]) => [key, Number(value)]),
  );
}

Deno.test("examples/meteors.ts runs from the command line", async (t) => {
  await t.step("small run: summary adds up, progress in plain lines", async () => {
    const args = ["--rounds", "2", "--burst", "6", "--max", "3", "--interval-ms", "40"];
    const { code, out, err } = await run("meteors.ts", [...args, "--seed", "1"]);
    assertEquals(code, 0, err);
    assert(out.includes("collecting meteors: 2 bursts of 6 requests, 40 ms apart, pool of 3"));
    const { requested, accepted, refused, collected, failed } = counts(out);
    assertEquals(requested, 12);
    assertEquals(accepted + refused, 12);
    assertEquals(collected + failed, accepted);
    assertGreaterOrEqual(accepted, 3);
    // Not a terminal: no carriage returns or ANSI codes, the last progress line is final.
    assert(!out.includes("\r") && !out.includes("\x1b["), JSON.stringify(out));
    assert(/^active 0\/3 {2}waiting 0 {2}done \d+ {2}failed \d+$/m.test(out), out);
  });

  await t.step("every meteor burns up: failures are counted, exit code 0", async () => {
    const args = ["--rounds", "1", "--burst", "4", "--max", "2", "--interval-ms", "30"];
    const { code, out, err } = await run("meteors.ts", [...args, "--fail-rate", "1"]);
    assertEquals(code, 0, err);
    assertEquals(counts(out), { requested: 4, accepted: 2, refused: 2, collected: 0, failed: 2 });
    assertEquals(err.match(/burned up before it was measured/g)?.length, 2, err);
  });

  await t.step("a bad flag is a usage error with exit code 2", async () => {
    const { code, err } = await run("meteors.ts", ["--rounds", "0"]);
    assertEquals(code, 2);
    assertEquals(err.trim(), 'error: --rounds must be an integer >= 1, got "0"');
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
    const child = example("astronomer.ts", ["--seconds", "60", "--max", "2"]).spawn();
    const errText = new Response(child.stderr).text();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    // The listener is installed before the first line is printed.
    while (!out.includes("observing")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
    child.kill("SIGINT");
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      out += chunk.value;
    }
    const { code } = await child.status;
    assertEquals(code, 0, await errText);
    assert(out.includes("interrupted (Ctrl-C)"), out);
    assert(out.includes("of 2: the loop never exceeded the bound"), out);
  });
});
