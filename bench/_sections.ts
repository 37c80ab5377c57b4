// The four parts of `deno task bench:peers`. Each spawns its runner script in
// fresh processes, prints a Markdown table and returns the figures the
// targets are computed from.
import { impls } from "./_impls.ts";
import {
  fmt,
  markdownTable,
  median,
  ratio,
  runScript,
  type SpawnOptions,
  TIMED_OUT,
} from "./_shared.ts";

const GC: SpawnOptions = { v8Flags: ["--expose-gc"] };
/** A young generation big enough that no GC runs while allocations are counted. */
const NO_GC: SpawnOptions = {
  v8Flags: ["--expose-gc", "--min-semi-space-size=256", "--max-semi-space-size=256"],
};
const ALLOC_N = 10_000;
const log = (message: string) => console.error(`… ${message}`);

export const FORK_AWAIT = "procpool fork+await (fifo)";
export const FORK_ALL = "procpool forkAll";
/** The fork+await floor with what the mission makes every fork pay (bench/_ref_pools.ts). */
export const GUARDED_FLOOR = "ref: fork+await with guard and context";
/** The forkAll floor with the nested-fork guard's lane (bench/_lane_pool.ts). */
export const LANE_FLOOR = "ref: worker loop + process objects + lane guard";
const BACKOFF = "procpool fork+await (backoff)";
const P_LIMIT = "p-limit";
const WORKER_LOOP = "ref: worker loop";
/** backoff polls on timers; past this its runner is killed and rerun smaller. */
const BACKOFF_BUDGET_MS = 60_000;

export interface Throughput {
  /** tasks per second, by implementation name */
  readonly rate: Record<string, number>;
  /** bytes allocated per task, by implementation name */
  readonly bytes: Record<string, number>;
  readonly markdown: string;
}

export async function throughput(n: number, concurrency: number): Promise<Throughput> {
  const rows: { name: string; n: number; ms: number[]; note: string; bytes: number }[] = [];
  for (const name of Object.keys(impls)) {
    log(`throughput: ${name}`);
    const alloc = await runScript<{ bytesPerTask: number[] }>(
      "alloc_runner.ts",
      [name, ALLOC_N, concurrency],
      NO_GC,
    );
    if (alloc === TIMED_OUT) throw new Error("unreachable: no timeout");
    const bytes = median(alloc.bytesPerTask);
    const budget = name === BACKOFF ? { ...GC, timeoutMs: BACKOFF_BUDGET_MS } : GC;
    const result = await runScript<{ ms: number[] }>(
      "peer_runner.ts",
      [name, n, concurrency],
      budget,
    );
    if (result !== TIMED_OUT) {
      rows.push({ name, n, ms: result.ms, note: "", bytes });
      continue;
    }
    const smaller = Math.floor(n / 10);
    log(`  over ${BACKOFF_BUDGET_MS / 1000} s at N=${n}; rerunning with N=${smaller}`);
    const retry = await runScript<{ ms: number[] }>(
      "peer_runner.ts",
      [name, smaller, concurrency],
      GC,
    );
    if (retry === TIMED_OUT) throw new Error("unreachable: no timeout on the retry");
    const note = `N=${fmt(smaller)}: N=${fmt(n)} took over ${BACKOFF_BUDGET_MS / 1000} s`;
    rows.push({ name, n: smaller, ms: retry.ms, note, bytes });
  }
  const rate: Record<string, number> = {};
  const bytes: Record<string, number> = {};
  for (const row of rows) {
    rate[row.name] = row.n / (median(row.ms) / 1000);
    bytes[row.name] = row.bytes;
  }
  const table = markdownTable(
    [
      "implementation",
      "N",
      "median ms",
      "tasks/s",
      "vs p-limit",
      "vs worker loop",
      "allocated B/task",
      "runs (ms)",
    ],
    rows.map((row) => [
      row.note === "" ? row.name : `${row.name} ¹`,
      fmt(row.n),
      fmt(median(row.ms), 1),
      fmt(rate[row.name]),
      ratio(rate[row.name] / rate[P_LIMIT]),
      ratio(rate[row.name] / rate[WORKER_LOOP]),
      fmt(row.bytes),
      row.ms.map((ms) => fmt(ms)).join(", "),
    ]),
  );
  const notes = rows.filter((row) => row.note !== "").map((row) => `¹ ${row.name}: ${row.note}.`);
  return { rate, bytes, markdown: [table, ...notes].join("\n\n") };
}

interface Snapshot {
  rss: number;
  heapUsed: number;
}
interface MemoryResult {
  n: number;
  before: Snapshot;
  queued: Snapshot;
  peakRss: number;
}

export interface Memory {
  /** heap bytes per queued task above the floor, by variant */
  readonly aboveFloor: Record<string, number>;
  readonly markdown: string;
}

const MB = 1024 * 1024;

export async function memory(n: number): Promise<Memory> {
  const variants = ["floor", "procpool forkProcess", "p-limit", "p-queue"];
  const results: Record<string, MemoryResult> = {};
  for (const variant of variants) {
    log(`memory: ${variant}`);
    const result = await runScript<MemoryResult>("memory_runner.ts", [variant, n], GC);
    if (result === TIMED_OUT) throw new Error("unreachable: no timeout");
    results[variant] = result;
  }
  const perTask = (r: MemoryResult, key: keyof Snapshot) => (r.queued[key] - r.before[key]) / n;
  const floor = results.floor;
  const aboveFloor: Record<string, number> = {};
  const rows = variants.map((variant) => {
    const r = results[variant];
    const heap = perTask(r, "heapUsed");
    aboveFloor[variant] = heap - perTask(floor, "heapUsed");
    const rssAbove = perTask(r, "rss") - perTask(floor, "rss");
    return [
      variant,
      fmt(r.peakRss / MB),
      fmt(r.queued.rss / MB),
      fmt(r.queued.heapUsed / MB),
      fmt(heap),
      variant === "floor" ? "—" : fmt(aboveFloor[variant]),
      variant === "floor" ? "—" : fmt(rssAbove),
    ];
  });
  const markdown = markdownTable(
    [
      `${fmt(n)} tasks queued behind 8`,
      "peak RSS MB",
      "RSS queued MB",
      "heap queued MB",
      "heap B/task",
      "heap B/task above floor",
      "RSS B/task above floor",
    ],
    rows,
  );
  return { aboveFloor, markdown };
}

export interface Virtual {
  readonly eventsPerSecond: number;
  /** The bare heap-of-sleepers loop's events per second, measured in the same runs. */
  readonly floorEventsPerSecond: number;
  readonly markdown: string;
}

export async function virtual(processes: number, delays: number): Promise<Virtual> {
  log("virtual clock");
  const r = await runScript<{ events: number; ms: number[]; floorMs: number[] }>(
    "virtual_runner.ts",
    [processes, delays],
    GC,
  );
  if (r === TIMED_OUT) throw new Error("unreachable: no timeout");
  const eventsPerSecond = r.events / (median(r.ms) / 1000);
  const floorEventsPerSecond = r.events / (median(r.floorMs) / 1000);
  const markdown = markdownTable(
    ["workload", "delay events", "median ms", "events/s", "runs (ms)"],
    [
      [
        `${fmt(processes)} processes × ${delays} delays, createTestRuntime`,
        fmt(r.events),
        fmt(median(r.ms), 1),
        fmt(eventsPerSecond),
        r.ms.map((ms) => fmt(ms)).join(", "),
      ],
      [
        "floor: the same async loops on a bare heap of resolvers (no runtime, trace or cancellation)",
        fmt(r.events),
        fmt(median(r.floorMs), 1),
        fmt(floorEventsPerSecond),
        r.floorMs.map((ms) => fmt(ms)).join(", "),
      ],
    ],
  );
  return { eventsPerSecond, floorEventsPerSecond, markdown };
}
