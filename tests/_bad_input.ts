// deno-lint-ignore-file no-explicit-any
// The table runner shared by the bad_input_*_test.ts files: each case calls one
// public entry point with bad input, and must throw (synchronous methods) or
// reject (Promise-returning ones, never a synchronous throw) with its named
// error, the message must name the argument and the value received, and the
// pool must be unchanged afterwards (API.md point 10).
import { assertEquals } from "@std/assert";
import { Runtime } from "../mod.ts";
import { VirtualClock } from "../testing.ts";

/** Everything a case may call into; `any` because the cases pass wrong types on purpose. */
export interface Env {
  rt: any;
  app: any;
  lang: any;
  v: any;
  handle: any;
  otherHandle: any;
  otherVar: any;
  closedApp: any;
  disposedApp: any;
  disposed: any;
  clock: any;
}

/** Where a case runs: outside any app, in a scope body, in a process, in an evalLang script. */
export type Where = "top" | "app" | "process" | "evalLang";
export interface Case {
  where: Where;
  returnsPromise: boolean;
  call: (env: Env) => unknown;
  error: new (...args: any[]) => Error;
  mentions: string[];
  label: string;
}

/** Adds a case to a table: `add(where, returnsPromise, error)(label, call, ...mentions)`. */
export type Add = (
  where: Where,
  returnsPromise: boolean,
  error: Case["error"],
) => (label: string, call: (env: Env) => unknown, ...mentions: string[]) => void;

/** An empty table of cases and the function that fills it. */
export function caseTable(): { cases: Case[]; add: Add } {
  const cases: Case[] = [];
  const add: Add = (where, returnsPromise, error) => (label, call, ...mentions) =>
    void cases.push({ where, returnsPromise, call, error, mentions, label });
  return { cases, add };
}

export const fn = () => 1;
export const ok = { maxProcesses: 1 };

const STATS_CHANGED = "changed the pool's stats";

/** Runs one case; returns what was wrong with it, if anything. */
async function check(c: Case, env: Env): Promise<string | undefined> {
  const before = env.rt.stats();
  let error: unknown;
  try {
    const result = c.call(env);
    if (!c.returnsPromise) return "did not throw";
    if (!(result instanceof Promise)) return `returned ${result} instead of a Promise`;
    error = await result.then(() => undefined, (e) => e ?? "rejected with nothing");
    if (error === undefined) return "resolved";
  } catch (thrown) {
    if (c.returnsPromise) return `threw ${thrown} synchronously instead of rejecting`;
    error = thrown;
  }
  if (!(error instanceof c.error) || (error as Error).name !== c.error.name) {
    return `${error} instead of a ${c.error.name}`;
  }
  // "got undefined undefined", "got object an object": say what was received once.
  const repeated = (error as Error).message.match(/got (?:an? )?(\w+) (?:an? )?\1\b/);
  if (repeated !== null) return `message "${(error as Error).message}" repeats "${repeated[1]}"`;
  const missing = c.mentions.filter((m) => !(error as Error).message.includes(m));
  if (missing.length > 0) {
    return `message "${(error as Error).message}" lacks ${missing.join(", ")}`;
  }
  const after = env.rt.stats();
  if (JSON.stringify(after) !== JSON.stringify(before)) return STATS_CHANGED;
}

/** Runs every case of the table, each where it belongs, and asserts none went wrong. */
export async function runTable(cases: Case[]): Promise<void> {
  await using rt = new Runtime({ maxProcesses: 2, seed: 1 });
  const other = new Runtime({ maxProcesses: 1 });
  const [otherHandle, otherVar] = await other.runApp(async (app) => {
    const handle = await app.forkProcess(fn);
    await app.awaitResult(handle);
    return [handle, app.newVar(0)] as const;
  });
  await other[Symbol.asyncDispose]();
  const disposed = new Runtime(ok);
  let disposedApp;
  const disposedRun = disposed.runApp(async (app) => (disposedApp = app, await app.evalLang(fn)));
  await disposed[Symbol.asyncDispose]();
  await disposedRun;
  let closedApp;
  await rt.runApp((app) => Promise.resolve(void (closedApp = app)));
  const env = {
    rt,
    otherHandle,
    otherVar,
    closedApp,
    disposedApp,
    disposed,
    clock: new VirtualClock(),
  } as Env;
  const problems: string[] = [];
  const runAll = async (where: Where, local: Partial<Env>) => {
    for (const c of cases.filter((c) => c.where === where)) {
      const problem = await check(c, { ...env, ...local });
      if (problem !== undefined) problems.push(`${c.label}: ${problem}`);
      // A leaked slot would make the next fork wait forever: stop here instead.
      if (problem === STATS_CHANGED) throw new Error(problems.join("\n"));
    }
  };
  await runAll("top", {});
  await rt.runApp(async (app) => {
    const handle = await app.forkProcess(fn);
    await app.awaitResult(handle);
    const v = app.newVar(0);
    await runAll("app", { app, handle, v });
    await app.awaitResult(
      await app.forkProcess((lang) => runAll("process", { app, handle, v, lang })),
    );
    await app.evalLang((lang) => runAll("evalLang", { app, handle, v, lang }));
  });
  console.log(`${cases.length} bad-input cases checked`);
  assertEquals(problems, []);
}

/**
 * A bad input that procpool must survive rather than refuse: the row runs a
 * small program and returns what went wrong, if anything. A row that hangs
 * (the failures these rows guard against are mostly hangs) is reported
 * after `HANG_MS` of real time instead of hanging the test.
 */
export interface Behaviour {
  label: string;
  run: () => Promise<string | undefined>;
}

const HANG_MS = 2_000;

/** Runs every row; asserts none went wrong or hung. */
export async function runBehaviours(rows: Behaviour[]): Promise<void> {
  const problems: string[] = [];
  for (const row of rows) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`hung for ${HANG_MS} ms`), HANG_MS);
    });
    const problem = await Promise.race([
      row.run().catch((error) => `threw ${error?.stack ?? error}`),
      hung,
    ]);
    clearTimeout(timer);
    if (problem !== undefined) problems.push(`${row.label}: ${problem}`);
  }
  console.log(`${rows.length} bad-input behaviours checked`);
  assertEquals(problems, []);
}

// ---- what the rows of a Behaviour table share ------------------------------------

/** A logger that logs nothing (the rows replace one method with a broken one). */
export const quiet = { isEnabledFor: () => false, debug() {}, info() {}, warn() {}, error() {} };

/** A problem if `actual` is not `expected`. */
export const is = (what: string, actual: unknown, expected: unknown): string | undefined =>
  Object.is(actual, expected) ? undefined : `${what} is ${String(actual)}, expected ${expected}`;

/** The first problem, or undefined. */
export const first = (...problems: (string | undefined)[]): string | undefined =>
  problems.find((p) => p !== undefined);

/** How a promise settled, without throwing. */
export const settled = (
  promise: Promise<unknown>,
): Promise<{ value: unknown; error: any }> =>
  promise.then((value) => ({ value, error: undefined }), (error) => ({ value: undefined, error }));

/** A problem if the runtime still runs or queues a process. */
export const idle = (runtime: Runtime): string | undefined => {
  const { active, waiting } = runtime.stats();
  return first(is("stats().active", active, 0), is("stats().waiting", waiting, 0));
};
