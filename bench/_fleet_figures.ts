// bench:fleet's figures for one library in one row, from what the row
// recorded (_fleet_row.ts), and the Markdown tables they make.
import {
  completedPerSecond,
  handoffs,
  type Hold,
  holdLengths,
  maxConcurrency,
  meanHold,
  shares,
  utilisation,
} from "./_fleet_analysis.ts";
import type { RowRun } from "./_fleet_row.ts";
import { scriptCalls, topCommands, totalCommands } from "./_fleet_redis.ts";
import { fmt, markdownTable, percentile } from "./_shared.ts";

export interface LoadFigures {
  perSecond: number;
  /** Mean hold, ms (timers run late on a busy machine). */
  meanHold: number;
  /** Median and 99th percentile hold, ms: what the jobs' holds really lasted. */
  holdP50: number;
  holdP99: number;
  utilisation: number;
  /** The smallest and largest process's part of the held time. */
  shareMin: number;
  shareMax: number;
  maxConcurrent: number;
  /** Cross-process release→start, ms. */
  p50: number;
  p99: number;
  crossPairs: number;
  /** Release→start within one process (maybe a local hand-off), ms. */
  localP50: number;
  localPairs: number;
  /** Redis commands (scripts' inner commands included) per completed process. */
  commands: number;
  /** Of which script runs (EVALSHA, EVAL), per completed process. */
  scripts: number;
  top: string;
  /** Redis CPU per completed process, µs. */
  cpuUs: number;
  /** Each limiter process's CPU while it ran (all its threads), share of one core, mean of the processes. */
  clientCpu: number;
  errors: string;
}

export interface IdleFigures {
  /** Redis CPU ms per second of the quiet window. */
  cpuMsPerS: number;
  commandsPerS: number;
  top: string;
  /** Waiters that ran, and how many started before the holders let go (must be 0). */
  waitersDone: number;
  early: number;
  maxConcurrent: number;
  errors: string;
}

function errors(run: RowRun): string {
  return run.errorCount === 0 ? "0" : `${run.errorCount} (${run.errors[0]})`;
}

export function loadFigures(run: RowRun, limit: number, processes: number): LoadFigures {
  const pairs = handoffs(run.holds, limit, run.window);
  const done = run.holds.length;
  const parts = shares(run.holds, run.window, processes);
  const lengths = holdLengths(run.holds, run.window);
  return {
    perSecond: completedPerSecond(run.holds, run.window),
    meanHold: meanHold(run.holds, run.window) / 1000,
    holdP50: percentile(lengths, 50) / 1000,
    holdP99: percentile(lengths, 99) / 1000,
    utilisation: utilisation(run.holds, limit, run.window),
    shareMin: Math.min(...parts),
    shareMax: Math.max(...parts),
    maxConcurrent: maxConcurrency(run.holds),
    p50: percentile(pairs.cross, 50) / 1000,
    p99: percentile(pairs.cross, 99) / 1000,
    crossPairs: pairs.cross.length,
    localP50: percentile(pairs.local, 50) / 1000,
    localPairs: pairs.local.length,
    commands: totalCommands(run.commands) / done,
    scripts: scriptCalls(run.commands) / done,
    top: topCommands(run.commands, done),
    cpuUs: run.cpu * 1e6 / done,
    clientCpu: run.clientCpu,
    errors: errors(run),
  };
}

export function idleFigures(run: RowRun, waiters: number): IdleFigures {
  const seconds = (run.window.to - run.window.from) / 1e6;
  const releasedAt = Math.min(...run.holds.map((hold) => hold.end));
  return {
    cpuMsPerS: run.cpu * 1000 / seconds,
    commandsPerS: totalCommands(run.commands) / seconds,
    top: topCommands(run.commands, seconds),
    waitersDone: run.waited.length,
    early: run.waited.filter((hold: Hold) => hold.start < releasedAt).length,
    maxConcurrent: maxConcurrency([...run.holds, ...run.waited]),
    errors: errors(run) + (run.waited.length < waiters ? `; only ${run.waited.length} ran` : ""),
  };
}

const pct = (value: number) => `${(value * 100).toFixed(1)} %`;
const ms = (value: number) => (Number.isNaN(value) ? "—" : value.toFixed(2));
const bound = (max: number, limit: number) => `${max}${max > limit ? " **OVER**" : ""}`;
const perProcess = (f: LoadFigures) => `${f.commands.toFixed(1)} (${f.scripts.toFixed(1)})`;
const split = (f: LoadFigures) =>
  `${(f.shareMin * 100).toFixed(0)}–${(f.shareMax * 100).toFixed(0)} %`;

/** The columns every load row shows, first. */
function throughputColumns(f: LoadFigures, limit: number): string[] {
  return [
    fmt(f.perSecond),
    f.meanHold.toFixed(2),
    pct(f.utilisation),
    split(f),
    bound(f.maxConcurrent, limit),
  ];
}
const THROUGHPUT = (limit: number) => [
  "processes/s",
  "mean hold ms",
  "utilisation",
  "share per process",
  `max concurrent (≤ ${limit})`,
];

/** Cross-process release→start, then the same-process pairs. */
function handoffColumns(f: LoadFigures): string[] {
  return [ms(f.p50), ms(f.p99), fmt(f.crossPairs), ms(f.localP50), fmt(f.localPairs)];
}
const HANDOFF = [
  "cross-process release→start p50 ms",
  "p99 ms",
  "pairs",
  "same-process p50 ms",
  "pairs",
];

/** What Redis did per completed process. */
function redisColumns(f: LoadFigures): string[] {
  return [perProcess(f), f.top, fmt(f.cpuUs), f.errors];
}
const REDIS = [
  "Redis commands/process (script runs)",
  "most called, per process",
  "Redis CPU µs/process",
  "errors",
];

export function holdTable(rows: [string, LoadFigures][], limit: number): string {
  return markdownTable(
    ["library", ...THROUGHPUT(limit), ...HANDOFF, ...REDIS],
    rows.map((
      [name, f],
    ) => [name, ...throughputColumns(f, limit), ...handoffColumns(f), ...redisColumns(f)]),
  );
}

/**
 * The load columns, with the holds' p50 and p99 after the mean (the short
 * row's holds are asked as 0–1 ms) and the limiter processes' own CPU.
 */
export function shortTable(rows: [string, LoadFigures][], limit: number): string {
  const [rate, mean, ...rest] = THROUGHPUT(limit);
  return markdownTable(
    ["library", rate, mean, "hold p50 / p99 ms", ...rest, "CPU per process", ...REDIS],
    rows.map(([name, f]) => {
      const [rate, mean, ...rest] = throughputColumns(f, limit);
      const spread = `${ms(f.holdP50)} / ${ms(f.holdP99)}`;
      return [name, rate, mean, spread, ...rest, pct(f.clientCpu), ...redisColumns(f)];
    }),
  );
}

export function handoffTable(rows: [string, LoadFigures][], limit: number): string {
  return markdownTable(
    ["library", ...HANDOFF, ...THROUGHPUT(limit), ...REDIS],
    rows.map((
      [name, f],
    ) => [name, ...handoffColumns(f), ...throughputColumns(f, limit), ...redisColumns(f)]),
  );
}

export function idleTable(rows: [string, IdleFigures][], limit: number): string {
  return markdownTable(
    [
      "library",
      "Redis CPU ms/s",
      "Redis commands/s",
      "most called, per s",
      "waiters run (early)",
      `max concurrent (≤ ${limit})`,
      "errors",
    ],
    rows.map(([name, f]) => [
      name,
      f.cpuMsPerS.toFixed(2),
      fmt(f.commandsPerS, 1),
      f.top,
      `${f.waitersDone} (${f.early})`,
      bound(f.maxConcurrent, limit),
      f.errors,
    ]),
  );
}
