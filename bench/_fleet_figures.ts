// bench:fleet's figures for one library in one row, from what the row
// recorded (_fleet_row.ts), and the Markdown tables they make.
import {
  completedPerSecond,
  handoffs,
  type Hold,
  maxConcurrency,
  utilisation,
} from "./_fleet_analysis.ts";
import type { RowRun } from "./_fleet_row.ts";
import { scriptCalls, topCommands, totalCommands } from "./_fleet_redis.ts";
import { fmt, markdownTable, percentile } from "./_shared.ts";

export interface LoadFigures {
  perSecond: number;
  utilisation: number;
  maxConcurrent: number;
  /** Cross-process release→start, ms. */
  p50: number;
  p99: number;
  crossPairs: number;
  localPairs: number;
  /** Redis commands (scripts' inner commands included) per completed process. */
  commands: number;
  /** Of which script runs (EVALSHA, EVAL), per completed process. */
  scripts: number;
  top: string;
  /** Redis CPU per completed process, µs. */
  cpuUs: number;
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

export function loadFigures(run: RowRun, limit: number): LoadFigures {
  const pairs = handoffs(run.holds, limit, run.window);
  const done = run.holds.length;
  return {
    perSecond: completedPerSecond(run.holds, run.window),
    utilisation: utilisation(run.holds, limit, run.window),
    maxConcurrent: maxConcurrency(run.holds),
    p50: percentile(pairs.cross, 50) / 1000,
    p99: percentile(pairs.cross, 99) / 1000,
    crossPairs: pairs.cross.length,
    localPairs: pairs.local.length,
    commands: totalCommands(run.commands) / done,
    scripts: scriptCalls(run.commands) / done,
    top: topCommands(run.commands, done),
    cpuUs: run.cpu * 1e6 / done,
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
const ms = (value: number) => (Number.isNaN(value) ? "— (never full)" : value.toFixed(2));
const perProcess = (f: LoadFigures) => `${f.commands.toFixed(1)} (${f.scripts.toFixed(1)})`;
const bound = (max: number, limit: number) => `${max}${max > limit ? " **OVER**" : ""}`;

export function holdTable(rows: [string, LoadFigures][], limit: number): string {
  return markdownTable(
    [
      "library",
      "processes/s",
      "utilisation",
      `max concurrent (≤ ${limit})`,
      "release→start p50 ms",
      "p99 ms",
      "cross / local pairs",
      "Redis commands/process (script runs)",
      "most called, per process",
      "Redis CPU µs/process",
      "errors",
    ],
    rows.map(([name, f]) => [
      name,
      fmt(f.perSecond),
      pct(f.utilisation),
      bound(f.maxConcurrent, limit),
      ms(f.p50),
      ms(f.p99),
      `${fmt(f.crossPairs)} / ${fmt(f.localPairs)}`,
      perProcess(f),
      f.top,
      fmt(f.cpuUs),
      f.errors,
    ]),
  );
}

export function shortTable(rows: [string, LoadFigures][], limit: number): string {
  return markdownTable(
    [
      "library",
      "processes/s",
      "utilisation",
      `max concurrent (≤ ${limit})`,
      "Redis commands/process (script runs)",
      "most called, per process",
      "Redis CPU µs/process",
      "errors",
    ],
    rows.map(([name, f]) => [
      name,
      fmt(f.perSecond),
      pct(f.utilisation),
      bound(f.maxConcurrent, limit),
      perProcess(f),
      f.top,
      fmt(f.cpuUs),
      f.errors,
    ]),
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

export function handoffTable(rows: [string, LoadFigures][], limit: number): string {
  return markdownTable(
    [
      "library",
      "release→start p50 ms",
      "p99 ms",
      "cross / local pairs",
      "processes/s",
      "utilisation",
      `max concurrent (≤ ${limit})`,
      "errors",
    ],
    rows.map(([name, f]) => [
      name,
      ms(f.p50),
      ms(f.p99),
      `${fmt(f.crossPairs)} / ${fmt(f.localPairs)}`,
      fmt(f.perSecond),
      pct(f.utilisation),
      bound(f.maxConcurrent, limit),
      f.errors,
    ]),
  );
}
