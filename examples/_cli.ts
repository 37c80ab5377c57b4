/**
 * What the example command lines share: number flags and the LogTape set-up.
 * The library never configures LogTape; an application (here, an example)
 * does, once, at its entry point, and resets it when it is done.
 *
 * @module
 */
import { configure, getConsoleSink, type LogLevel, reset } from "@logtape/logtape";
import { parseArgs } from "node:util";
import type { ProgressLine } from "./_progress.ts";
import type { TimelineRecorder } from "../mod.ts";

/** A bad command line: the message says which flag and why. */
export class UsageError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The accepted range of one number flag. */
export interface NumberFlag {
  /** Used when the flag is absent. */
  default: number;
  /** Smallest accepted value. */
  min: number;
  /** Largest accepted value. Default: no limit. */
  max?: number;
  /** Only integers. Default false. */
  integer?: boolean;
}

/**
 * Parses `--name value` flags, all numbers. An unknown flag or a bad value
 * throws a {@linkcode UsageError} that names the flag.
 */
export function parseNumberFlags<K extends string>(
  args: readonly string[],
  flags: Record<K, NumberFlag>,
): Record<K, number> {
  const names = Object.keys(flags) as K[];
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      args: [...args],
      options: Object.fromEntries(names.map((name) => [name, { type: "string" as const }])),
      strict: true,
    }).values;
  } catch (error) {
    throw new UsageError(`${(error as Error).message}; known flags: --${names.join(", --")}`);
  }
  const result = {} as Record<K, number>;
  for (const name of names) {
    const flag = flags[name];
    const raw = values[name];
    if (raw === undefined) {
      result[name] = flag.default;
      continue;
    }
    const value = Number(raw);
    const integerOk = !flag.integer || Number.isInteger(value);
    if (
      typeof raw !== "string" || raw.trim() === "" || !Number.isFinite(value) || !integerOk ||
      value < flag.min || (flag.max !== undefined && value > flag.max)
    ) {
      const range = flag.max === undefined ? `>= ${flag.min}` : `${flag.min}..${flag.max}`;
      throw new UsageError(
        `--${name} must be ${flag.integer ? "an integer" : "a number"} ${range}, got ${
          JSON.stringify(raw)
        }`,
      );
    }
    result[name] = value;
  }
  return result;
}

/**
 * Takes `--name=value` or `--name value` out of `args`, for the one flag
 * that is not a number. Returns the value (undefined if absent) and the rest.
 */
export function takeStringFlag(
  args: readonly string[],
  name: string,
): [string | undefined, string[]] {
  const rest = [...args];
  const at = rest.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
  if (at === -1) return [undefined, rest];
  const [flag] = rest.splice(at, 1);
  const value = flag.includes("=") ? flag.slice(flag.indexOf("=") + 1) : rest.splice(at, 1)[0];
  if (value === undefined || value === "") throw new UsageError(`--${name} needs a file name`);
  return [value, rest];
}

/**
 * Writes a recorded timeline as Chrome trace-event JSON and says how to open
 * it; `-` writes it to stdout instead, as one line.
 */
export async function writeTimeline(path: string, recorder: TimelineRecorder): Promise<void> {
  if (path === "-") {
    console.log(JSON.stringify(recorder));
    return;
  }
  await Deno.writeTextFile(path, JSON.stringify(recorder));
  console.log(`timeline written to ${path}: open it in https://ui.perfetto.dev`);
}

/**
 * Sends the `category` loggers to the console, erasing the live progress line
 * before each record so the two do not overprint each other. Returns the
 * function that undoes it (LogTape's `reset`).
 */
export async function logToConsole(
  category: string,
  lowestLevel: LogLevel,
  progress?: ProgressLine,
): Promise<() => Promise<void>> {
  const consoleSink = getConsoleSink();
  await configure({
    sinks: {
      console: (record) => {
        progress?.clear();
        consoleSink(record);
      },
    },
    loggers: [
      { category: [category], lowestLevel, sinks: ["console"] },
      // LogTape's own warnings (a sink that threw, ...) should be seen too.
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["console"] },
    ],
  });
  return reset;
}

/**
 * Runs an example's `main` as a program: a {@linkcode UsageError} prints its
 * message and exits with status 2 instead of a stack trace.
 */
export async function runMain(main: (args: readonly string[]) => Promise<unknown>): Promise<void> {
  try {
    await main(Deno.args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`error: ${error.message}`);
    Deno.exit(2);
  }
}
