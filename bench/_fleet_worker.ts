// One OS process of a bench:fleet row: one limiter on the shared key. It
// prints "ready" once connected and warmed up, waits for "go <startAtMs>" on
// stdin (wall-clock ms, comparable across processes on one host), runs its
// part of the row and prints one JSON line, a WorkerReport.
//
//   deno run --allow-net=127.0.0.1 --allow-env --allow-read bench/_fleet_worker.ts '<json Plan>'
import process from "node:process";
import { readGo, wallMs } from "../tests/_fleet_harness.ts";
import { closeHolds, holdFor, SHORT_BELOW_MS, type ShortHold } from "./_short_hold.ts";
import {
  type FleetLimiter,
  type Library,
  type LimiterOptions,
  openLimiter,
} from "./_fleet_limiters.ts";

export interface Plan extends LimiterOptions {
  library: Library;
  /** Load rows: `lanes` loops, each running one job after another for `ms`, each holding a random time. */
  load?: {
    lanes: number;
    holdMinMs: number;
    holdMaxMs: number;
    ms: number;
    short: ShortHold;
    /** A pause after each job before the lane asks again (the paced row). */
    pauseMs?: number;
  };
  /**
   * The idle row: `holders` jobs start at once and hold until `releaseAfterMs`;
   * `waiters` more are queued behind them at `queueAfterMs` (both after the go's start).
   */
  idle?: { holders: number; waiters: number; queueAfterMs: number; releaseAfterMs: number };
}

export interface WorkerReport {
  /** [start, end] of every job, wall-clock µs (the idle row: the holders' jobs). */
  holds: [number, number][];
  /** The idle row: the waiters' jobs. */
  waited: [number, number][];
  /** Jobs that could not run (their messages, the first few). */
  errors: string[];
  errorCount: number;
  /** CPU time (user + system, every thread) and wall time of the run after the go, ms. */
  cpuMs: number;
  wallMs: number;
}

const wallUs = () => Math.round(wallMs() * 1000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const sleepUntil = (atMs: number) => sleep(atMs - wallMs());

async function main(): Promise<void> {
  const plan: Plan = JSON.parse(Deno.args[0]);
  const limiter = await openLimiter(plan.library, plan);
  // Starts the timer thread before the go, when this row's holds use it.
  if (plan.load && plan.load.holdMinMs < SHORT_BELOW_MS) await holdFor(0, plan.load.short);
  console.log("ready");
  const startAt = await readGo();
  const report: WorkerReport = {
    holds: [],
    waited: [],
    errors: [],
    errorCount: 0,
    cpuMs: 0,
    wallMs: 0,
  };
  const failed = (error: unknown) => {
    if (report.errorCount++ < 5) report.errors.push(String(error));
  };
  await sleepUntil(startAt);
  const cpuBefore = process.cpuUsage();
  if (plan.load) await load(limiter, plan.load, startAt, report, failed);
  if (plan.idle) await idle(limiter, plan.idle, startAt, report, failed);
  const cpu = process.cpuUsage(cpuBefore);
  report.cpuMs = (cpu.user + cpu.system) / 1000;
  report.wallMs = wallMs() - startAt;
  await limiter.close();
  closeHolds();
  console.log(JSON.stringify(report));
  // A library's leftover timers or sockets must not keep the row waiting.
  Deno.exit(0);
}

function load(
  limiter: FleetLimiter,
  { lanes, holdMinMs, holdMaxMs, ms, short, pauseMs }: NonNullable<Plan["load"]>,
  startAt: number,
  report: WorkerReport,
  failed: (error: unknown) => void,
): Promise<void> {
  const job = async () => {
    const start = wallUs();
    await holdFor(holdMinMs + Math.random() * (holdMaxMs - holdMinMs), short);
    report.holds.push([start, wallUs()]);
  };
  return limiter.session(async (run) => {
    const lane = async () => {
      while (wallMs() < startAt + ms) {
        await run(job).catch(failed);
        if (pauseMs !== undefined) await sleep(pauseMs);
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
  });
}

function idle(
  limiter: FleetLimiter,
  { holders, waiters, queueAfterMs, releaseAfterMs }: NonNullable<Plan["idle"]>,
  startAt: number,
  report: WorkerReport,
  failed: (error: unknown) => void,
): Promise<void> {
  const hold = async () => {
    const start = wallUs();
    await sleepUntil(startAt + releaseAfterMs);
    report.holds.push([start, wallUs()]);
  };
  const wait = () => {
    const start = wallUs();
    report.waited.push([start, wallUs()]);
    return Promise.resolve();
  };
  return limiter.session(async (run) => {
    const held = Array.from({ length: holders }, () => run(hold).catch(failed));
    await sleepUntil(startAt + queueAfterMs);
    const queued = Array.from({ length: waiters }, () => run(wait).catch(failed));
    await Promise.all([...held, ...queued]);
  });
}

if (import.meta.main) await main();
