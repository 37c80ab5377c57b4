/**
 * The book's failure case (§9.1.3), rewritten. The original
 *
 * ```haskell
 * astronomer ch = do
 *   someRef <- newIORef [1..10]
 *   forever $ forkIO $ do
 *     val <- readIORef someRef
 *     print val
 * ```
 *
 * creates threads as fast as the loop spins until memory runs out. Here the
 * same endless loop forks through `app.forkProcess`, which waits while the
 * pool is full: the loop is held at the bound, however long it runs. It stops
 * on Ctrl-C or after `--seconds`, and prints the highest live count it saw.
 *
 * ```sh
 * deno run --allow-env examples/astronomer.ts [--seconds 3] [--max 4] [--seed N]
 * ```
 *
 * @module
 */
import { getLogger } from "@logtape/logtape";
import { type AppL, type LangL, type PoolStats, Runtime, type SharedVar } from "../mod.ts";
import { logToConsole, parseNumberFlags, runMain } from "./_cli.ts";
import { ProgressLine } from "./_progress.ts";

/** How long one observation takes, in ms. */
export interface Pace {
  /** Shortest observation. */
  readonly minMs: number;
  /** Longest observation. */
  readonly maxMs: number;
}

/** The command line's pace: several observations per second per slot. */
export const DEMO_PACE: Pace = { minMs: 20, maxMs: 120 };

/**
 * One observation, the book's `readIORef someRef >>= print`: read the shared
 * sky, look at one of its values for a while, count the observation.
 */
export async function observe(
  lang: LangL,
  sky: SharedVar<readonly number[]>,
  seen: SharedVar<number>,
  pace: Pace = DEMO_PACE,
): Promise<number> {
  const values = await lang.readVar(sky);
  const value = values[lang.getRandomInt(0, values.length - 1)];
  lang.logDebug("process {processId} observes {value}", { value });
  await lang.delay(lang.getRandomInt(pace.minMs, pace.maxMs));
  await lang.modifyVar(seen, (n) => n + 1);
  return value;
}

/** How to run the loop. */
export interface ObserveOptions {
  /** Stops the loop: a waiting fork is withdrawn and running observations are cancelled. */
  readonly signal: AbortSignal;
  /** The pool's counters, sampled after every fork to track the peak. */
  readonly stats: () => PoolStats;
  /** Default {@linkcode DEMO_PACE}. */
  readonly pace?: Pace;
}

/** What the loop did. */
export interface ObservationReport {
  /** Observations forked. */
  readonly forked: number;
  /** Observations that ran to the end (the others were cancelled at the stop). */
  readonly completed: number;
  /** The highest `stats().active` seen while the loop ran. */
  readonly peakActive: number;
}

/**
 * `forever $ forkIO`, bounded: fork observations until `signal` aborts. Each
 * `forkProcess` waits for a free slot, so the loop runs at the pace the pool
 * allows and never holds more than `maxProcesses` observations. Tokens are not
 * kept: a finished observation leaves nothing behind, so memory stays flat.
 */
export async function observeForever(
  app: AppL,
  options: ObserveOptions,
): Promise<ObservationReport> {
  const { signal, stats, pace = DEMO_PACE } = options;
  const sky = app.newVar<readonly number[]>([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const seen = app.newVar(0);
  let forked = 0;
  let peakActive = 0;
  // A child scope ends only once every observation it forked has stopped, so
  // `seen` is final when it returns.
  await app.scope(async (loop) => {
    while (!signal.aborted) {
      try {
        // The signal withdraws this wait on stop, and cancels the process once it runs.
        await loop.forkProcess((lang) => observe(lang, sky, seen, pace), { signal });
      } catch (error) {
        if (signal.aborted && error === signal.reason) break;
        throw error;
      }
      forked++;
      peakActive = Math.max(peakActive, stats().active);
    }
  });
  const completed = await app.evalLang((lang) => lang.readVar(seen));
  return { forked, completed, peakActive };
}

/** The command line: observe until Ctrl-C or `--seconds`, then report the peak. */
export async function main(args: readonly string[]): Promise<ObservationReport> {
  const flags = parseNumberFlags(args, {
    seconds: { default: 3, min: 0 },
    max: { default: 4, min: 1, integer: true },
    seed: { default: NaN, min: 0, integer: true },
  });
  await using runtime = new Runtime({
    maxProcesses: flags.max,
    seed: Number.isNaN(flags.seed) ? undefined : flags.seed,
    logger: getLogger(["astronomer"]),
  });
  const stop = new AbortController();
  const onInterrupt = () => stop.abort(new Error("interrupted (Ctrl-C)"));
  const timer = setTimeout(
    () => stop.abort(new Error(`time is up (${flags.seconds} s)`)),
    flags.seconds * 1000,
  );
  Deno.addSignalListener("SIGINT", onInterrupt);
  let peak = 0;
  const progress = new ProgressLine(() => {
    const s = runtime.stats();
    peak = Math.max(peak, s.active);
    return `active ${s.active}/${s.max}  waiting ${s.waiting}  done ${s.succeeded}  ` +
      `cancelled ${s.cancelled}  peak ${peak}`;
  }, { plainEveryMs: 500 });
  const resetLogging = await logToConsole("astronomer", "info", progress);
  const started = performance.now();
  try {
    console.log(
      `observing with a pool of ${flags.max} for ${flags.seconds} s (Ctrl-C stops earlier)`,
    );
    progress.start();
    let report: ObservationReport;
    try {
      report = await runtime.runApp((app) =>
        observeForever(app, { signal: stop.signal, stats: () => runtime.stats() })
      );
    } finally {
      progress.stop();
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const highest = Math.max(peak, report.peakActive);
    console.log(
      `stopped after ${seconds} s: ${(stop.signal.reason as Error).message}; ` +
        `forked ${report.forked}, completed ${report.completed}`,
    );
    if (highest > flags.max) {
      throw new Error(`the bound was broken: peak active ${highest} > max ${flags.max}`);
    }
    console.log(`peak active ${highest} of ${flags.max}: the loop never exceeded the bound`);
    return { ...report, peakActive: highest };
  } finally {
    clearTimeout(timer);
    Deno.removeSignalListener("SIGINT", onInterrupt);
    await resetLogging();
  }
}

if (import.meta.main) {
  await runMain(main);
}
