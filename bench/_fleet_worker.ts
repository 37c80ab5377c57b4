// One OS process of a bench:fleet row: one limiter on the shared key. It
// prints "ready" once connected and warmed up, waits for `go <json Go>` on
// stdin (wall-clock ms, comparable across processes on one host), runs its
// part of the row and prints one JSON line, a WorkerReport.
//
//   deno run --allow-net=127.0.0.1 --allow-env --allow-read bench/_fleet_worker.ts '<json Plan>'
import {
  type FleetLimiter,
  type Library,
  type LimiterOptions,
  openLimiter,
} from "./_fleet_limiters.ts";

export interface Plan extends LimiterOptions {
  library: Library;
  /** Load rows: `lanes` loops, each running one job after another, each holding a random time. */
  load?: { lanes: number; holdMinMs: number; holdMaxMs: number };
  /** The idle row: `holders` jobs hold until `releaseAt`; `waiters` more queue behind them. */
  idle?: { holders: number; waiters: number };
}

/** Wall-clock ms. */
export interface Go {
  startAt: number;
  /** Load rows: no job starts after this. */
  endAt: number;
  /** The idle row: when the waiters are queued, and when the holders let go. */
  waitAt: number;
  releaseAt: number;
}

export interface WorkerReport {
  /** [start, end] of every job, wall-clock µs (the idle row: the holders' jobs). */
  holds: [number, number][];
  /** The idle row: the waiters' jobs. */
  waited: [number, number][];
  /** Jobs that could not run (their messages, the first few). */
  errors: string[];
  errorCount: number;
}

const wallMs = () => performance.timeOrigin + performance.now();
const wallUs = () => Math.round(wallMs() * 1000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const sleepUntil = (atMs: number) => sleep(atMs - wallMs());

async function main(): Promise<void> {
  const plan: Plan = JSON.parse(Deno.args[0]);
  const limiter = await openLimiter(plan.library, plan);
  console.log("ready");
  const go = await readGo();
  const report: WorkerReport = { holds: [], waited: [], errors: [], errorCount: 0 };
  const failed = (error: unknown) => {
    if (report.errorCount++ < 5) report.errors.push(String(error));
  };
  await sleepUntil(go.startAt);
  if (plan.load) await load(limiter, plan.load, go, report, failed);
  if (plan.idle) await idle(limiter, plan.idle, go, report, failed);
  await limiter.close();
  console.log(JSON.stringify(report));
  // A library's leftover timers or sockets must not keep the row waiting.
  Deno.exit(0);
}

function load(
  limiter: FleetLimiter,
  { lanes, holdMinMs, holdMaxMs }: NonNullable<Plan["load"]>,
  go: Go,
  report: WorkerReport,
  failed: (error: unknown) => void,
): Promise<void> {
  const job = async () => {
    const start = wallUs();
    await sleep(holdMinMs + Math.random() * (holdMaxMs - holdMinMs));
    report.holds.push([start, wallUs()]);
  };
  return limiter.session(async (run) => {
    const lane = async () => {
      while (wallMs() < go.endAt) await run(job).catch(failed);
    };
    await Promise.all(Array.from({ length: lanes }, lane));
  });
}

function idle(
  limiter: FleetLimiter,
  { holders, waiters }: NonNullable<Plan["idle"]>,
  go: Go,
  report: WorkerReport,
  failed: (error: unknown) => void,
): Promise<void> {
  const hold = async () => {
    const start = wallUs();
    await sleepUntil(go.releaseAt);
    report.holds.push([start, wallUs()]);
  };
  const wait = () => {
    const start = wallUs();
    report.waited.push([start, wallUs()]);
    return Promise.resolve();
  };
  return limiter.session(async (run) => {
    const held = Array.from({ length: holders }, () => run(hold).catch(failed));
    await sleepUntil(go.waitAt);
    const queued = Array.from({ length: waiters }, () => run(wait).catch(failed));
    await Promise.all([...held, ...queued]);
  });
}

async function readGo(): Promise<Go> {
  const reader = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("stdin closed before go");
    text += value;
  }
  reader.releaseLock();
  if (!text.startsWith("go ")) throw new Error(`expected "go <json>", got ${JSON.stringify(text)}`);
  return JSON.parse(text.slice(3));
}

if (import.meta.main) await main();
