// One row of bench:fleet for one library: N fresh OS processes
// (_fleet_worker.ts) on one key of the private redis-server, started
// together, their holds merged, and what Redis counted meanwhile.
import type { Redis } from "ioredis";
import { FleetChild, wallMs } from "../tests/_fleet_harness.ts";
import type { Hold, Window } from "./_fleet_analysis.ts";
import type { Library } from "./_fleet_limiters.ts";
import { type CommandCounts, commandCounts, cpuSeconds, resetStats } from "./_fleet_redis.ts";
import type { Plan, WorkerReport } from "./_fleet_worker.ts";

const WORKER = new URL("./_fleet_worker.ts", import.meta.url).pathname;
/** Between the go and the first job: every process has read its go by then. */
const GO_LEAD_MS = 300;
/**
 * Load rows: jobs run this long before the measured `ms` and are left out of
 * the figures, so that what is timed is each library's optimised code, as in
 * a long-lived fleet (procpool's start path took about 200 µs per hand-off in
 * the first seconds of a run and about 110 µs later).
 */
export const WARM_UP_MS = 2_000;
/** The idle row: holders take every slot, then waiters queue, then the quiet window opens. */
const QUEUE_AFTER_MS = 1_000;
const WINDOW_AFTER_MS = 2_000;
const RELEASE_AFTER_WINDOW_MS = 500;

export interface RowSpec {
  /** Names the key, with the library. */
  name: string;
  limit: number;
  /** Each process's own bound (procpool's maxProcesses). */
  local: number;
  /** As the worker's plan has it, but for its length (`ms` here). */
  load?: Omit<NonNullable<Plan["load"]>, "ms">;
  idle?: { holders: number; waiters: number };
  /**
   * Load rows: how long jobs keep starting after the warm-up. The idle row:
   * how long the quiet window lasts.
   */
  ms: number;
  /** Load rows: the warm-up, WARM_UP_MS unless given. */
  warmUpMs?: number;
}

export interface RowRun {
  /** Every process's jobs (the idle row: the holders'), merged. */
  holds: Hold[];
  /** The idle row: the waiters' jobs. */
  waited: Hold[];
  errors: string[];
  errorCount: number;
  /** Load rows: from the go to the last exit. The idle row: the quiet window only. */
  commands: CommandCounts;
  /** Redis CPU seconds over the same span as `commands`. */
  cpu: number;
  /** The limiter processes' CPU time over their run, as a share of one core, averaged over them. */
  clientCpu: number;
  /** Load rows: the measured part of the run. The idle row: the quiet window. µs. */
  window: Window;
}

export async function runRow(
  redis: Redis,
  port: number,
  library: Library,
  spec: RowSpec,
  processes: number,
): Promise<RowRun> {
  const warmUpMs = spec.warmUpMs ?? WARM_UP_MS;
  const plan: Plan = {
    library,
    port,
    key: `fleet:${spec.name}:${library}`,
    limit: spec.limit,
    local: spec.local,
    load: spec.load && { ...spec.load, ms: warmUpMs + spec.ms },
    idle: spec.idle && {
      ...spec.idle,
      queueAfterMs: QUEUE_AFTER_MS,
      releaseAfterMs: WINDOW_AFTER_MS + spec.ms + RELEASE_AFTER_WINDOW_MS,
    },
  };
  const workers = Array.from({ length: processes }, () => new FleetChild(WORKER, plan));
  try {
    await Promise.all(workers.map(ready));
    await resetStats(redis);
    let cpuBefore = await cpuSeconds(redis);
    const startAt = Math.round(wallMs()) + GO_LEAD_MS;
    await Promise.all(workers.map((worker) => worker.send(`go ${startAt}`)));
    let window: Window;
    let commands: CommandCounts | undefined;
    let cpu = 0;
    if (spec.idle) {
      const from = startAt + WINDOW_AFTER_MS;
      await sleepUntil(from);
      await resetStats(redis);
      cpuBefore = await cpuSeconds(redis);
      await sleepUntil(from + spec.ms);
      cpu = await cpuSeconds(redis) - cpuBefore;
      commands = await commandCounts(redis);
      window = { from: from * 1000, to: (from + spec.ms) * 1000 };
    } else {
      window = { from: (startAt + warmUpMs) * 1000, to: (startAt + warmUpMs + spec.ms) * 1000 };
    }
    // The idle row also waits before its window and drains after it.
    const reports = await Promise.all(
      workers.map(async (worker) =>
        JSON.parse(await worker.line("its report", warmUpMs + spec.ms + 60_000)) as WorkerReport
      ),
    );
    if (!commands) {
      cpu = await cpuSeconds(redis) - cpuBefore;
      commands = await commandCounts(redis);
    }
    const tag = (proc: number) => ([start, end]: [number, number]): Hold => ({ proc, start, end });
    const holds = reports.flatMap((report, proc) => report.holds.map(tag(proc)));
    await dump(spec, library, holds, window);
    return {
      holds,
      waited: reports.flatMap((report, proc) => report.waited.map(tag(proc))),
      errors: reports.flatMap((report) => report.errors),
      errorCount: reports.reduce((sum, report) => sum + report.errorCount, 0),
      commands,
      cpu,
      clientCpu: reports.reduce((sum, report) => sum + report.cpuMs / report.wallMs, 0) /
        reports.length,
      window,
    };
  } finally {
    for (const worker of workers) kill(worker.child);
    await Promise.all(workers.map((worker) => worker.finish()));
  }
}

/**
 * A measurement aid: with PROCPOOL_FLEET_DUMP set to a directory, each row's
 * holds and window go there as JSON (<row>-<library>.json), for reading
 * single hand-offs afterwards. Written after the row has run.
 */
async function dump(spec: RowSpec, library: Library, holds: Hold[], window: Window) {
  const dir = Deno.env.get("PROCPOOL_FLEET_DUMP");
  if (!dir) return;
  const file = `${dir}/${spec.name}-${library}.json`;
  await Deno.writeTextFile(file, JSON.stringify({ limit: spec.limit, window, holds }));
}

async function ready(worker: FleetChild): Promise<void> {
  const line = await worker.line("ready");
  if (line !== "ready") throw new Error(`expected "ready", got ${JSON.stringify(line)}`);
}

/** Ends a worker that is stuck or has already reported (a no-op after it exited). */
function kill(child: Deno.ChildProcess): void {
  try {
    child.kill("SIGKILL");
  } catch {
    // Already exited.
  }
}

function sleepUntil(atMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, atMs - wallMs())));
}
