/**
 * The book's meteor collection (§9.1.4), as a demo of the pool. Meteors
 * arrive in bursts, faster than they can be watched. Each one is watched by a
 * process, and a process needs one of the pool's slots (a telescope) while it
 * runs; the forks that find every telescope busy wait in line for one. A few
 * meteors burn up before they are measured: those processes fail, and the
 * astronomer counts them instead of losing them.
 *
 * ```sh
 * deno run --allow-env examples/meteors.ts [--bursts 5] [--burst 4] [--max 4]
 *   [--interval-ms 200] [--fail-rate 0.1] [--seed N] [--trace=timeline.json]
 * ```
 *
 * The domain functions are exported: tests/examples_test.ts runs the same
 * code on `createTestRuntime`, where the whole run takes no real time.
 *
 * @module
 */
import { getLogger } from "@logtape/logtape";
import {
  type AppL,
  type LangL,
  type PoolStats,
  ProcessFailedError,
  type ProcessHandle,
  Runtime,
  type SharedVar,
  TimelineRecorder,
} from "../mod.ts";
import { logToConsole, parseNumberFlags, runMain, takeStringFlag, writeTimeline } from "./_cli.ts";
import { ProgressLine } from "./_progress.ts";

/** One measured meteor. */
export interface Meteor {
  /** Its size in centimetres, 1..100. */
  readonly size: number;
  /** When it was measured, on the runtime's clock. */
  readonly seenAt: number;
  /** The id of the process that measured it. */
  readonly by: number;
}

/** How the sky behaves: how long a meteor takes to show, how often one burns up. */
export interface Sky {
  /** Shortest wait for a meteor, in ms. */
  readonly minMs: number;
  /** Longest wait for a meteor, in ms. */
  readonly maxMs: number;
  /** Probability that a meteor burns up before it is measured, 0..1. */
  readonly failRate: number;
}

/** The demo's sky: a meteor takes a quarter to three quarters of a second, one in ten burns up. */
export const DEMO_SKY: Sky = { minMs: 250, maxMs: 750, failRate: 0.1 };

/** The meteor burned up before it could be measured (a domain failure). */
export class MeteorBurnedUpError extends Error {
  /** Creates the error for the process that lost its meteor. */
  constructor(processId: number) {
    super(`the meteor watched by process ${processId} burned up`);
    this.name = "MeteorBurnedUpError";
  }
}

/** Waits for a meteor and measures it; throws MeteorBurnedUpError now and then. */
export async function getRandomMeteor(lang: LangL, sky: Sky = DEMO_SKY): Promise<Meteor> {
  await lang.delay(lang.getRandomInt(sky.minMs, sky.maxMs));
  if (lang.random() < sky.failRate) {
    lang.logWarning("process {processId}: the meteor burned up before it was measured");
    throw new MeteorBurnedUpError(lang.processId);
  }
  return { size: lang.getRandomInt(1, 100), seenAt: lang.now(), by: lang.processId };
}

/** A process: get a meteor and add it to the catalogue. */
export async function recordMeteor(
  lang: LangL,
  catalogue: SharedVar<readonly Meteor[]>,
  sky: Sky = DEMO_SKY,
): Promise<Meteor> {
  const meteor = await getRandomMeteor(lang, sky);
  await lang.modifyVar(catalogue, (all) => [...all, meteor]);
  lang.logDebug("recorded a meteor of size {size}", { size: meteor.size });
  return meteor;
}

/** How meteors arrive. */
export interface WatchOptions {
  /** How many bursts of meteors. */
  readonly bursts: number;
  /** Meteors per burst. */
  readonly burst: number;
  /** Time between bursts, on the runtime's clock, in ms. */
  readonly intervalMs: number;
  /** Default {@linkcode DEMO_SKY}. */
  readonly sky?: Sky;
  /** The runtime's stats, to note the longest line of waiting forks. */
  readonly stats?: () => PoolStats;
}

/** What a night of watching gave. `meteors = measured + burnedUp`. */
export interface WatchReport {
  /** Meteors that arrived (one process each). */
  readonly meteors: number;
  /** Meteors measured and recorded in the catalogue. */
  readonly measured: number;
  /** Meteors that burned up (failed processes). */
  readonly burnedUp: number;
  /** The most forks that waited for a slot at once (0 without `stats`). */
  readonly peakWaiting: number;
  /** The catalogue, in the order the meteors were recorded. */
  readonly catalogue: readonly Meteor[];
}

/**
 * The astronomer. Every `intervalMs` a burst of `burst` meteors arrives, and
 * each is forked at once with `forkProcess`; with every slot taken, the forks
 * wait in line (FIFO) for a free one. Then it awaits every process, counting
 * burnt-up meteors as failures (any other failure is a bug and is rethrown).
 */
export async function watchMeteors(app: AppL, options: WatchOptions): Promise<WatchReport> {
  const { bursts, burst, intervalMs, sky = DEMO_SKY, stats } = options;
  const catalogue = app.newVar<readonly Meteor[]>([]);
  const forks: Promise<ProcessHandle<Meteor>>[] = [];
  let peakWaiting = 0;
  for (let round = 0; round < bursts; round++) {
    if (round > 0) await app.evalLang((lang) => lang.delay(intervalMs));
    for (let i = 0; i < burst; i++) {
      forks.push(app.forkProcess((lang) => recordMeteor(lang, catalogue, sky), {
        name: `meteor ${forks.length + 1}`,
      }));
    }
    peakWaiting = Math.max(peakWaiting, stats?.().waiting ?? 0);
  }
  let burnedUp = 0;
  for (const handle of await Promise.all(forks)) {
    try {
      await app.awaitResult(handle);
    } catch (error) {
      if (!(error instanceof ProcessFailedError && error.cause instanceof MeteorBurnedUpError)) {
        throw error;
      }
      burnedUp++;
    }
  }
  const all = await app.evalLang((lang) => lang.readVar(catalogue));
  return { meteors: forks.length, measured: all.length, burnedUp, peakWaiting, catalogue: all };
}

/** The command line: a few seconds of real watching with a live status line. */
export async function main(args: readonly string[]): Promise<WatchReport> {
  const [tracePath, numberArgs] = takeStringFlag(args, "trace");
  const flags = parseNumberFlags(numberArgs, {
    bursts: { default: 5, min: 1, integer: true },
    burst: { default: 4, min: 1, integer: true },
    max: { default: 4, min: 1, integer: true },
    "interval-ms": { default: 200, min: 0 },
    "fail-rate": { default: DEMO_SKY.failRate, min: 0, max: 1 },
    seed: { default: NaN, min: 0, integer: true },
  });
  const interval = flags["interval-ms"];
  // The sky keeps pace with the bursts, so a faster run tells the same story.
  const sky: Sky = {
    minMs: Math.round(interval * 1.25),
    maxMs: Math.max(1, Math.round(interval * 3.75)),
    failRate: flags["fail-rate"],
  };
  const recorder = tracePath === undefined ? undefined : new TimelineRecorder();
  await using runtime = new Runtime({
    maxProcesses: flags.max,
    seed: Number.isNaN(flags.seed) ? undefined : flags.seed,
    logger: getLogger(["meteors"]),
    recorder,
  });
  const stats = () => runtime.stats();
  const progress = new ProgressLine(() => {
    const s = stats();
    return `active ${s.active}/${s.max}  waiting ${s.waiting}  done ${s.succeeded}  failed ${s.failed}`;
  }, { plainEveryMs: 250 });
  const resetLogging = await logToConsole("meteors", "info", progress);
  try {
    const meteors = flags.bursts * flags.burst;
    console.log(
      `${meteors} meteors arrive, ${flags.burst} every ${
        interval / 1000
      } s; each is watched by a ` +
        `process holding one of ${flags.max} telescopes (maxProcesses: ${flags.max}) for ` +
        `${sky.minMs / 1000}-${sky.maxMs / 1000} s, so the rest wait in line for a free one.\n` +
        "active: telescopes in use · waiting: forks in line · done: measured · failed: burned up",
    );
    const started = performance.now();
    progress.start();
    let report: WatchReport;
    try {
      report = await runtime.runApp((app) =>
        watchMeteors(app, {
          bursts: flags.bursts,
          burst: flags.burst,
          intervalMs: interval,
          sky,
          stats,
        })
      );
    } finally {
      progress.stop();
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `watched ${report.meteors} meteors with ${flags.max} telescopes in ${seconds} s: ` +
        `measured ${report.measured}, burned up ${report.burnedUp}; ` +
        `at most ${report.peakWaiting} waited for a telescope at once (seed ${runtime.seed})`,
    );
    const biggest = report.catalogue.reduce<Meteor | undefined>(
      (best, m) => best === undefined || m.size > best.size ? m : best,
      undefined,
    );
    if (biggest !== undefined) {
      console.log(`the biggest was ${biggest.size} cm across, measured by process ${biggest.by}`);
    }
    return report;
  } finally {
    await resetLogging();
    if (recorder !== undefined) await writeTimeline(tracePath!, recorder);
  }
}

if (import.meta.main) {
  await runMain(main);
}
