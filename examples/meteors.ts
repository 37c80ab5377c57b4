/**
 * The book's meteor collection (§9.1.4). An astronomer requests a process for
 * each `getRandomMeteor` action with `tryForkProcess`, discards the requests
 * the pool refuses, awaits every accepted token and records the meteors in a
 * shared catalogue. A few meteors burn up before they can be measured: those
 * processes fail, and the astronomer counts them instead of losing them.
 *
 * ```sh
 * deno run --allow-env examples/meteors.ts [--rounds 8] [--burst 12] [--max 8]
 *   [--interval-ms 450] [--fail-rate 0.08] [--seed N] [--trace=timeline.json]
 * ```
 *
 * The domain functions are exported: tests/examples_test.ts runs the same
 * code on `createTestRuntime`, where an hour of observation takes no real time.
 *
 * @module
 */
import { getLogger } from "@logtape/logtape";
import {
  type AppL,
  type LangL,
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
  /** Size, 1..100. */
  readonly size: number;
  /** Mass, a multiple of the size. */
  readonly mass: number;
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

/** The demo's sky: waits of a fraction of a second, a few meteors lost. */
export const DEMO_SKY: Sky = { minMs: 150, maxMs: 1_100, failRate: 0.08 };

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
  const size = lang.getRandomInt(1, 100);
  return { size, mass: size * lang.getRandomInt(10, 100), seenAt: lang.now(), by: lang.processId };
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

/** How to run a collection. */
export interface CollectOptions {
  /** How many bursts of requests. */
  readonly rounds: number;
  /** Requests per burst. */
  readonly burst: number;
  /** Time between bursts, on the runtime's clock, in ms. */
  readonly intervalMs: number;
  /** Default {@linkcode DEMO_SKY}. */
  readonly sky?: Sky;
}

/** What a collection gave. `requested = accepted + refused`, `accepted = collected + failed`. */
export interface CollectionReport {
  /** Processes requested. */
  readonly requested: number;
  /** Requests the pool accepted (a token came back). */
  readonly accepted: number;
  /** Requests refused because the pool was full; discarded. */
  readonly refused: number;
  /** Meteors in the catalogue. */
  readonly collected: number;
  /** Accepted processes whose meteor burned up. */
  readonly failed: number;
  /** The catalogue, in the order the meteors were recorded. */
  readonly catalogue: readonly Meteor[];
}

/**
 * The astronomer. Every `intervalMs` it asks for `burst` processes with
 * `tryForkProcess`; a full pool refuses some, and those requests are dropped.
 * It then awaits every accepted token, counting burnt-up meteors as failures
 * (any other failure is a bug and is rethrown).
 */
export async function collectMeteors(
  app: AppL,
  options: CollectOptions,
): Promise<CollectionReport> {
  const { rounds, burst, intervalMs, sky = DEMO_SKY } = options;
  const catalogue = app.newVar<readonly Meteor[]>([]);
  const tokens: ProcessHandle<Meteor>[] = [];
  let requested = 0;
  for (let round = 0; round < rounds; round++) {
    if (round > 0) await app.evalLang((lang) => lang.delay(intervalMs));
    for (let i = 0; i < burst; i++) {
      requested++;
      const token = app.tryForkProcess((lang) => recordMeteor(lang, catalogue, sky), {
        name: `meteor ${round + 1}.${i + 1}`,
      });
      if (token !== undefined) tokens.push(token);
    }
  }
  let failed = 0;
  for (const token of tokens) {
    try {
      await app.awaitResult(token);
    } catch (error) {
      if (!(error instanceof ProcessFailedError && error.cause instanceof MeteorBurnedUpError)) {
        throw error;
      }
      failed++;
    }
  }
  const all = await app.evalLang((lang) => lang.readVar(catalogue));
  return {
    requested,
    accepted: tokens.length,
    refused: requested - tokens.length,
    collected: all.length,
    failed,
    catalogue: all,
  };
}

/** The command line: a few seconds of real observation with a live status line. */
export async function main(args: readonly string[]): Promise<CollectionReport> {
  const [tracePath, numberArgs] = takeStringFlag(args, "trace");
  const flags = parseNumberFlags(numberArgs, {
    rounds: { default: 8, min: 1, integer: true },
    burst: { default: 12, min: 1, integer: true },
    max: { default: 8, min: 1, integer: true },
    "interval-ms": { default: 450, min: 0 },
    "fail-rate": { default: DEMO_SKY.failRate, min: 0, max: 1 },
    seed: { default: NaN, min: 0, integer: true },
  });
  const interval = flags["interval-ms"];
  // The sky keeps pace with the bursts, so a faster run is the same story.
  const sky: Sky = {
    minMs: Math.round(interval / 3),
    maxMs: Math.max(1, Math.round(interval * 2.5)),
    failRate: flags["fail-rate"],
  };
  const recorder = tracePath === undefined ? undefined : new TimelineRecorder();
  await using runtime = new Runtime({
    maxProcesses: flags.max,
    seed: Number.isNaN(flags.seed) ? undefined : flags.seed,
    logger: getLogger(["meteors"]),
    recorder,
  });
  const progress = new ProgressLine(() => {
    const s = runtime.stats();
    return `active ${s.active}/${s.max}  waiting ${s.waiting}  done ${s.succeeded}  failed ${s.failed}`;
  });
  const resetLogging = await logToConsole("meteors", "info", progress);
  try {
    console.log(
      `collecting meteors: ${flags.rounds} bursts of ${flags.burst} requests, ` +
        `${interval} ms apart, pool of ${flags.max}, seed ${runtime.seed}`,
    );
    progress.start();
    let report: CollectionReport;
    try {
      report = await runtime.runApp((app) =>
        collectMeteors(app, { rounds: flags.rounds, burst: flags.burst, intervalMs: interval, sky })
      );
    } finally {
      progress.stop();
    }
    const { requested, accepted, refused, collected, failed } = report;
    console.log(
      `requested ${requested}, accepted ${accepted}, refused ${refused}, ` +
        `collected ${collected}, failed ${failed}`,
    );
    const biggest = report.catalogue.reduce<Meteor | undefined>(
      (best, m) => best === undefined || m.size > best.size ? m : best,
      undefined,
    );
    if (biggest !== undefined) {
      console.log(`biggest meteor: size ${biggest.size}, mass ${biggest.mass}`);
    }
    // tryForkProcess never queues, so nothing ever waits here: refused requests are dropped.
    return report;
  } finally {
    await resetLogging();
    if (recorder !== undefined) await writeTimeline(tracePath!, recorder);
  }
}

if (import.meta.main) {
  await runMain(main);
}
