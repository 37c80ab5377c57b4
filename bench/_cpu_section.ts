// The "cpu" part of `deno task bench:peers`: CPU-bound tasks as ordinary
// processes and as worker processes, the per-task overhead of tiny tasks next
// to piscina, tinypool and workerpool (npm, under Deno through
// node:worker_threads), memory per warm worker and the time to replace a
// stopped one. Each figure comes from fresh `deno run`s in interleaved rounds,
// median reported; the tiny-task row takes more rounds and several batches
// per run (see TINY_ROUNDS).
import { fmt, markdownTable, median, ratio, runScript, type SpawnOptions } from "./_shared.ts";

/** A runner that has not printed its line by then is killed and reported as such. */
const FLAGS: SpawnOptions = { denoFlags: ["--allow-run", "--allow-sys"], timeoutMs: 60_000 };
const ROUNDS = 3;
/**
 * The tiny-task row measures ~0.1 s batches, so on a busy 2-core machine one
 * stall moves a run by 2x (piscina measured 43.7, 45.6 and 93.6 µs in one
 * run). Every implementation gets the same: TINY_ROUNDS fresh runs, each
 * timing TINY_BATCHES batches after its warm-up batch, in rounds whose order
 * rotates (round r starts at the r-th implementation, so none is always first
 * or always after the same one); the figure is the median of all its batches.
 */
const TINY_ROUNDS = 5;
const TINY_BATCHES = 5;
const log = (message: string) => console.error(`… ${message}`);

/** Hashing rounds of ~20 ms on this machine (measured here, so the target's task size holds). */
function calibrate(): number {
  const buffer = new Uint8Array(64 * 1024).map((_, i) => (i * 31) & 0xff);
  let h = 0;
  const start = performance.now();
  let rounds = 0;
  while (performance.now() - start < 200) {
    for (let i = 0; i < buffer.length; i++) h = Math.imul(h ^ buffer[i], 0x01000193);
    rounds++;
  }
  return Math.max(1, Math.round(rounds / 10)) + (h & 0);
}

/** The runner's time, or NaN if it hung (tinypool under Deno sometimes never answers). */
async function measure(args: (string | number)[]): Promise<number> {
  try {
    const result = await runScript<{ ms: number }>("cpu_runner.ts", args, FLAGS);
    if (typeof result === "symbol") {
      log(`${args.join(" ")}: killed after ${FLAGS.timeoutMs! / 1000} s`);
      return NaN;
    }
    return result.ms;
  } catch (error) {
    log(`${args.join(" ")} failed: ${error}`);
    return NaN;
  }
}

interface TinyRun {
  /** Each timed batch's ms. */
  readonly batches: number[];
  /** CPU the runner's OS process (all threads) used per task, µs. */
  readonly cpuUs: number;
}

/** One tiny-task run, or undefined if it hung or failed. */
async function measureTiny(impl: string, tiny: number): Promise<TinyRun | undefined> {
  const args = ["tiny", impl, tiny, TINY_BATCHES];
  try {
    const result = await runScript<TinyRun>("cpu_runner.ts", args, FLAGS);
    if (typeof result !== "symbol") return result;
    log(`${args.join(" ")}: killed after ${FLAGS.timeoutMs! / 1000} s`);
  } catch (error) {
    log(`${args.join(" ")} failed: ${error}`);
  }
  return undefined;
}

/** The median of the runs that finished. */
function finished(values: number[]): number {
  const done = values.filter((value) => !Number.isNaN(value));
  return done.length === 0 ? NaN : median(done);
}

export interface CpuResult {
  readonly speedUp: number;
  readonly tinyUs: Record<string, number>;
  readonly markdown: string;
}

export async function cpu(tasks: number, tiny: number): Promise<CpuResult> {
  const rounds = calibrate();
  const cpuImpls = ["inline", "thread", "process"] as const;
  const cpuMs: Record<string, number[]> = { inline: [], thread: [], process: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const impl of cpuImpls) {
      log(`cpu: ${impl}, round ${round + 1}`);
      cpuMs[impl].push(await measure(["cpu", impl, tasks, rounds]));
    }
  }
  const inline = finished(cpuMs.inline);
  const cpuRows = cpuImpls.map((impl) => [
    impl === "inline" ? "forkProcess (the runtime's thread)" : `forkWorker, isolation "${impl}"`,
    fmt(finished(cpuMs[impl])),
    ratio(inline / finished(cpuMs[impl])),
    cpuMs[impl].map((ms) => Number.isNaN(ms) ? "hung" : fmt(ms)).join(", "),
  ]);

  const tinyImpls = ["procpool thread", "procpool process", "piscina", "tinypool", "workerpool"];
  const tinyRuns: Record<string, (TinyRun | undefined)[]> = Object.fromEntries(
    tinyImpls.map((i) => [i, []]),
  );
  for (let round = 0; round < TINY_ROUNDS; round++) {
    for (let k = 0; k < tinyImpls.length; k++) {
      const impl = tinyImpls[(round + k) % tinyImpls.length];
      log(`tiny: ${impl}, round ${round + 1}`);
      tinyRuns[impl].push(await measureTiny(impl, tiny));
    }
  }
  const perTask = (ms: number) => (ms * 1000) / tiny;
  const tinyUs = Object.fromEntries(tinyImpls.map((impl) => {
    const batches = tinyRuns[impl].flatMap((run) => run?.batches ?? []);
    return [impl, batches.length === 0 ? NaN : perTask(median(batches))];
  }));
  const tinyRows = tinyImpls.map((impl) => {
    const done = tinyRuns[impl].filter((run) => run !== undefined);
    return [
      impl,
      Number.isNaN(tinyUs[impl]) ? "no run finished" : fmt(tinyUs[impl], 1),
      done.length === 0 ? "–" : fmt(median(done.map((run) => run.cpuUs)), 1),
      tinyRuns[impl].map((run) => run === undefined ? "hung" : fmt(perTask(median(run.batches)), 1))
        .join(", "),
    ];
  });

  const memoryRows: string[][] = [];
  const replaceRows: string[][] = [];
  for (const isolation of ["thread", "process"]) {
    log(`memory and replacement: ${isolation}`);
    const memory = await runScript<{ bytesPerWorker: number }>(
      "cpu_runner.ts",
      ["memory", isolation, 2],
      FLAGS,
    );
    const replace = await runScript<{ ms: number[] }>(
      "cpu_runner.ts",
      ["replace", isolation, 5],
      FLAGS,
    );
    if (typeof memory === "symbol" || typeof replace === "symbol") continue;
    memoryRows.push([isolation, fmt(memory.bytesPerWorker / 1024 / 1024, 1)]);
    replaceRows.push([
      isolation,
      fmt(median(replace.ms), 1),
      replace.ms.map((ms) => fmt(ms, 1)).join(", "),
    ]);
  }

  const markdown = [
    `${tasks} tasks of ${rounds} FNV-1a rounds over 64 KB (about 20 ms each, calibrated in this run), ` +
    `${navigator.hardwareConcurrency} warm workers, maxProcesses ${navigator.hardwareConcurrency}; ` +
    "median of 3 runs, each in a fresh `deno run` after one warm-up batch.\n",
    markdownTable(["CPU-bound", "median ms", "speed-up", "runs (ms)"], cpuRows),
    `\nPer-task overhead, ${fmt(tiny)} tiny tasks (n + 1) all submitted at once to ` +
    `${navigator.hardwareConcurrency} warm worker threads (peers under Deno via node:worker_threads). ` +
    `The same for every implementation: ${TINY_ROUNDS} fresh runs each, in interleaved rounds ` +
    `whose order rotates; each run times ${TINY_BATCHES} batches after one warm-up batch; ` +
    `"median" is over all ${TINY_ROUNDS * TINY_BATCHES} batches, "CPU" is the CPU time of the ` +
    "runner's whole OS process (all its threads) per task, median of the runs (less moved by " +
    "other load than wall time). tinypool is started with its defaults but only given tasks once " +
    "its workers said ready (its atomics mode deadlocks under Deno otherwise; see cpu_runner.ts):\n",
    markdownTable(
      ["tiny tasks", "median µs per task", "CPU µs per task", "runs (median µs per task)"],
      tinyRows,
    ),
    "\nMemory per warm worker (RSS of this process grown by 2 warm workers, plus theirs for child processes):\n",
    markdownTable(["isolation", "MB per warm worker"], memoryRows),
    "\nTime to replace a stopped worker (cancel with graceMs 0, until the next fork's result arrives):\n",
    markdownTable(["isolation", "median ms", "runs (ms)"], replaceRows),
  ].join("\n");
  return { speedUp: inline / finished(cpuMs.thread), tinyUs, markdown };
}
