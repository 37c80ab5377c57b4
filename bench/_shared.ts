// Helpers shared by the benchmark driver (peers.ts) and its runner scripts:
// the tiny task, result checks, statistics, child-process spawning and
// Markdown output. Every runner prints exactly one JSON line on stdout.

/** The unit of work every implementation runs: one microtask hop. */
export function task(i: number): Promise<number> {
  return (async () => {
    await Promise.resolve();
    return i;
  })();
}

/** 0, 1, …, n - 1. */
export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** Throws unless `results` is exactly 0, 1, …, n - 1. */
export function checkResults(label: string, results: readonly unknown[], n: number): void {
  if (!Array.isArray(results) || results.length !== n) {
    throw new Error(`${label}: expected ${n} results, got ${results?.length}`);
  }
  for (let i = 0; i < n; i++) {
    if (results[i] !== i) {
      throw new Error(`${label}: result[${i}] is ${String(results[i])}, expected ${i}`);
    }
  }
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Runs a full GC when the process was started with --expose-gc. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) gc();
}

/** Prints a runner's result for the driver to parse. */
export function emit(result: unknown): void {
  console.log(JSON.stringify(result));
}

/** A positional argument as a positive integer, or `fallback`. */
export function intArg(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value.replaceAll("_", ""));
  if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError(`not a positive integer: ${value}`);
  return n;
}

const benchDir = new URL(".", import.meta.url);
const configPath = new URL("../deno.json", import.meta.url).pathname;

export interface SpawnOptions {
  /** Extra V8 flags, e.g. ["--expose-gc"]. */
  v8Flags?: string[];
  /** Extra `deno run` flags placed before the script, e.g. ["--cpu-prof"]. */
  denoFlags?: string[];
  cwd?: string;
  /** Kill the child after this many ms; runScript then resolves `undefined`. */
  timeoutMs?: number;
}

/** What runScript resolves with when the child ran out of time. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/**
 * Runs `bench/<script> ...args` in a fresh `deno run` with the repo's config
 * and returns the JSON line it printed. Throws with its stderr if it failed;
 * resolves TIMED_OUT if it was killed after `options.timeoutMs`.
 */
export async function runScript<T>(
  script: string,
  args: readonly (string | number)[],
  options: SpawnOptions = {},
): Promise<T | typeof TIMED_OUT> {
  const flags = ["run", "--quiet", "--config", configPath, "--allow-env", "--allow-read"];
  if (options.v8Flags?.length) flags.push(`--v8-flags=${options.v8Flags.join(",")}`);
  flags.push(...(options.denoFlags ?? []));
  const scriptPath = new URL(script, benchDir).pathname;
  const child = new Deno.Command(Deno.execPath(), {
    args: [...flags, scriptPath, ...args.map(String)],
    cwd: options.cwd,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, options.timeoutMs);
  const output = await child.output();
  clearTimeout(timer);
  if (timedOut) return TIMED_OUT;
  const stdout = new TextDecoder().decode(output.stdout).trim();
  if (!output.success) {
    const stderr = new TextDecoder().decode(output.stderr).trim();
    throw new Error(`${script} ${args.join(" ")} failed (code ${output.code}):\n${stderr}`);
  }
  const last = stdout.split("\n").at(-1) ?? "";
  return JSON.parse(last) as T;
}

/** A Markdown table; numbers are already formatted by the caller. */
export function markdownTable(header: readonly string[], rows: readonly string[][]): string {
  const lines = [
    `| ${header.join(" | ")} |`,
    `| ${header.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ];
  return lines.join("\n");
}

/** 1234567.8 -> "1,234,568"; `digits` decimals are kept. */
export function fmt(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return String(value);
  const fixed = value.toFixed(digits);
  const [whole, fraction] = fixed.split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** A ratio like "1.73×". */
export function ratio(value: number): string {
  return `${value.toFixed(2)}×`;
}
