// deno-lint-ignore-file no-explicit-any
// Bad input at every public entry point: each call must throw (synchronous
// methods) or reject (Promise-returning ones, never a synchronous throw) with
// its named error, the message must name the argument and the value received,
// and the pool must be unchanged afterwards (API.md point 10).
import { assertEquals } from "@std/assert";
import {
  backoff,
  fifo,
  NestedForkError,
  Runtime,
  RuntimeDisposedError,
  ScopeClosedError,
} from "../mod.ts";
import { createTestRuntime, VirtualClock } from "../testing.ts";

/** Everything a case may call into; `any` because the cases pass wrong types on purpose. */
interface Env {
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

type Where = "top" | "app" | "process" | "evalLang";
interface Case {
  where: Where;
  returnsPromise: boolean;
  call: (env: Env) => unknown;
  error: new (...args: any[]) => Error;
  mentions: string[];
  label: string;
}

const cases: Case[] = [];
function add(where: Where, returnsPromise: boolean, error: Case["error"]) {
  return (label: string, call: (env: Env) => unknown, ...mentions: string[]) =>
    cases.push({ where, returnsPromise, call, error, mentions, label });
}
const T = TypeError, R = RangeError;
const fn = () => 1;
const ok = { maxProcesses: 1 };

// ---- Runtime, backoff, VirtualClock, createTestRuntime -------------------------
const top = (error: Case["error"]) => add("top", false, error);
top(T)("Runtime()", () => new (Runtime as any)(), "Runtime options", "undefined");
top(T)("Runtime(5)", () => new Runtime(5 as any), "Runtime options", "5");
for (const [value, shown] of [["3", '"3"'], [undefined, "undefined"], [null, "null"], [3n, "3n"]]) {
  top(T)(
    `maxProcesses ${shown}`,
    () => new Runtime({ maxProcesses: value as any }),
    "maxProcesses",
    shown as string,
  );
}
for (const value of [0, -1, 1.5, NaN, Infinity, 2 ** 53]) {
  top(R)(
    `maxProcesses ${value}`,
    () => new Runtime({ maxProcesses: value }),
    "maxProcesses",
    String(value),
  );
}
for (
  const [value, shown] of [["fifo", '"fifo"'], [{}, "an object"], [null, "null"], [
    fifo,
    "a function",
  ]]
) {
  top(T)(
    `wait ${shown}`,
    () => new Runtime({ ...ok, wait: value as any }),
    "wait",
    shown as string,
  );
}
for (
  const [value, shown] of [[{}, "an object"], ["system", '"system"'], [null, "null"], [{
    now: () => 0,
  }, "an object"]]
) {
  top(T)(
    `clock ${shown}`,
    () => new Runtime({ ...ok, clock: value as any }),
    "clock",
    shown as string,
  );
}
top(T)("seed string", () => new Runtime({ ...ok, seed: "1" as any }), "seed", '"1"');
top(T)("seed bigint", () => new Runtime({ ...ok, seed: 1n as any }), "seed", "1n");
for (const value of [NaN, Infinity, -Infinity]) {
  top(R)(`seed ${value}`, () => new Runtime({ ...ok, seed: value }), "seed", String(value));
}
for (
  const [value, shown] of [[{}, "an object"], ["x", '"x"'], [null, "null"], [console, "an object"]]
) {
  top(T)(
    `logger ${shown}`,
    () => new Runtime({ ...ok, logger: value as any }),
    "logger",
    shown as string,
  );
}
top(T)("backoff(5)", () => backoff(5 as any), "backoff options", "5");
top(T)("backoff(null)", () => backoff(null as any), "backoff options", "null");
for (const key of ["initialMs", "maxMs", "factor", "jitter"]) {
  top(T)(`backoff ${key} string`, () => backoff({ [key]: "1" }), key, '"1"');
  top(R)(`backoff ${key} NaN`, () => backoff({ [key]: NaN }), key, "NaN");
}
for (
  const [key, value] of [
    ["initialMs", -1],
    ["initialMs", Infinity],
    ["maxMs", -1],
    ["maxMs", Infinity],
    ["factor", 0.5],
    ["factor", Infinity],
    ["factor", -2],
    ["jitter", -0.1],
    ["jitter", 1.5],
  ] as const
) {
  top(R)(`backoff ${key} ${value}`, () => backoff({ [key]: value }), key, String(value));
}
top(R)(
  "backoff maxMs < initialMs",
  () => backoff({ initialMs: 10, maxMs: 5 }),
  "maxMs",
  "initialMs",
  "5",
  "10",
);
top(T)("VirtualClock string", () => new VirtualClock("0" as any), "VirtualClock start", '"0"');
top(R)("VirtualClock NaN", () => new VirtualClock(NaN), "VirtualClock start", "NaN");
top(R)("VirtualClock Infinity", () => new VirtualClock(Infinity), "VirtualClock start", "Infinity");
top(T)(
  "createTestRuntime()",
  () => (createTestRuntime as any)(),
  "createTestRuntime options",
  "undefined",
);
top(R)(
  "createTestRuntime maxProcesses 0",
  () => createTestRuntime({ maxProcesses: 0 }),
  "maxProcesses",
  "0",
);
top(R)(
  "createTestRuntime start NaN",
  () => createTestRuntime({ ...ok, start: NaN }),
  "start",
  "NaN",
);
top(T)(
  "createTestRuntime start string",
  () => createTestRuntime({ ...ok, start: "0" as any }),
  "start",
  '"0"',
);
top(T)(
  "createTestRuntime seed string",
  () => createTestRuntime({ ...ok, seed: "x" as any }),
  "seed",
  '"x"',
);
top(T)(
  "createTestRuntime wait",
  () => createTestRuntime({ ...ok, wait: "fifo" as any }),
  "wait",
  '"fifo"',
);

const topAsync = (error: Case["error"]) => add("top", true, error);
for (const value of [-1, NaN, Infinity]) {
  topAsync(R)(`clock.sleep(${value})`, (e) => e.clock.sleep(value), "ms", String(value));
  topAsync(R)(
    `clock.advance(${value})`,
    (e) => e.clock.advance(value),
    "advance ms",
    String(value),
  );
}
topAsync(T)("clock.sleep string", (e) => e.clock.sleep("1"), "ms", '"1"');
topAsync(T)("clock.advance string", (e) => e.clock.advance("1"), "advance ms", '"1"');
topAsync(T)("clock.sleep signal string", (e) => e.clock.sleep(1, "stop"), "signal", '"stop"');
topAsync(T)("runApp string", (e) => e.rt.runApp("x"), "runApp body", '"x"');
topAsync(T)("runApp undefined", (e) => e.rt.runApp(), "runApp body", "undefined");
topAsync(T)("runApp options 5", (e) => e.rt.runApp(fn, 5), "runApp options", "5");
topAsync(T)("runApp options null", (e) => e.rt.runApp(fn, null), "runApp options", "null");
topAsync(T)("runApp failFast", (e) => e.rt.runApp(fn, { failFast: "yes" }), "failFast", '"yes"');
topAsync(RuntimeDisposedError)("runApp after dispose", (e) => e.disposed.runApp(fn), "disposed");

// ---- AppL -----------------------------------------------------------------------
const forkOptionCases: [string, unknown, Case["error"], string[]][] = [
  ["options 5", 5, T, ["options", "5"]],
  ["options null", null, T, ["options", "null"]],
  ["timeoutMs -1", { timeoutMs: -1 }, R, ["timeoutMs", "-1"]],
  ["timeoutMs NaN", { timeoutMs: NaN }, R, ["timeoutMs", "NaN"]],
  ["timeoutMs -Infinity", { timeoutMs: -Infinity }, R, ["timeoutMs", "-Infinity"]],
  ["timeoutMs string", { timeoutMs: "5" }, T, ["timeoutMs", '"5"']],
  ["signal string", { signal: "s" }, T, ["signal", '"s"']],
  ["signal object", { signal: {} }, T, ["signal", "an object"]],
  ["signal null", { signal: null }, T, ["signal", "null"]],
  ["name number", { name: 5 }, T, ["name", "5"]],
];
for (const [label, options, error, mentions] of forkOptionCases) {
  add("app", true, error)(
    `forkProcess ${label}`,
    (e) => e.app.forkProcess(fn, options),
    "forkProcess",
    ...mentions,
  );
  add("app", false, error)(
    `tryForkProcess ${label}`,
    (e) => e.app.tryForkProcess(fn, options),
    "tryForkProcess",
    ...mentions,
  );
  add("app", true, error)(
    `forkAll ${label}`,
    (e) => e.app.forkAll([1], fn, options),
    "forkAll",
    ...mentions,
  );
}
for (const [value, shown] of [["x", '"x"'], [undefined, "undefined"], [{}, "an object"]]) {
  add("app", true, T)(
    `forkProcess ${shown}`,
    (e) => e.app.forkProcess(value),
    "forkProcess process",
    shown as string,
  );
  add("app", false, T)(
    `tryForkProcess ${shown}`,
    (e) => e.app.tryForkProcess(value),
    "tryForkProcess process",
    shown as string,
  );
  add("app", true, T)(
    `forkAll process ${shown}`,
    (e) => e.app.forkAll([1], value),
    "forkAll process",
    shown as string,
  );
  add("app", true, T)(
    `evalLang ${shown}`,
    (e) => e.app.evalLang(value),
    "evalLang script",
    shown as string,
  );
  add("app", true, T)(`scope ${shown}`, (e) => e.app.scope(value), "scope body", shown as string);
  add("app", true, T)(
    `awaitResult ${shown}`,
    (e) => e.app.awaitResult(value),
    "awaitResult handle",
    shown as string,
  );
}
for (const [value, shown] of [[5, "5"], [null, "null"], [{}, "an object"]]) {
  add("app", true, T)(
    `forkAll items ${shown}`,
    (e) => e.app.forkAll(value, fn),
    "forkAll items",
    shown as string,
  );
}
const appAsync = (error: Case["error"]) => add("app", true, error);
appAsync(T)(
  "awaitResult, another runtime's handle",
  (e) => e.app.awaitResult(e.otherHandle),
  "awaitResult",
  "another runtime",
);
appAsync(R)(
  "awaitResult timeoutMs -1",
  (e) => e.app.awaitResult(e.handle, { timeoutMs: -1 }),
  "timeoutMs",
  "-1",
);
appAsync(R)(
  "awaitResult timeoutMs NaN",
  (e) => e.app.awaitResult(e.handle, { timeoutMs: NaN }),
  "timeoutMs",
  "NaN",
);
appAsync(T)(
  "awaitResult options 5",
  (e) => e.app.awaitResult(e.handle, 5),
  "awaitResult options",
  "5",
);
appAsync(T)(
  "awaitResult signal 1",
  (e) => e.app.awaitResult(e.handle, { signal: 1 }),
  "signal",
  "1",
);
appAsync(T)("scope failFast 1", (e) => e.app.scope(fn, { failFast: 1 }), "failFast", "1");
appAsync(T)("scope options null", (e) => e.app.scope(fn, null), "scope options", "null");
for (const [label, app] of [["ended", "closedApp"], ["disposed", "disposedApp"]] as const) {
  const closed = (returnsPromise: boolean) => add("app", returnsPromise, ScopeClosedError);
  closed(true)(
    `forkProcess after its scope ${label}`,
    (e) => e[app].forkProcess(fn),
    "forkProcess",
  );
  closed(false)(
    `tryForkProcess after its scope ${label}`,
    (e) => e[app].tryForkProcess(fn),
    "tryForkProcess",
  );
  closed(true)(
    `awaitResult after its scope ${label}`,
    (e) => e[app].awaitResult(e.handle),
    "awaitResult",
  );
  closed(true)(`forkAll after its scope ${label}`, (e) => e[app].forkAll([1], fn), "forkAll");
  closed(true)(`evalLang after its scope ${label}`, (e) => e[app].evalLang(fn), "evalLang");
  closed(false)(`newVar after its scope ${label}`, (e) => e[app].newVar(0), "newVar");
  closed(true)(`scope after its scope ${label}`, (e) => e[app].scope(fn), "scope");
}

// ---- LangL, and AppL from inside a process or an evalLang script ------------------
for (const where of ["process", "evalLang"] as const) {
  const nested = (returnsPromise: boolean) => add(where, returnsPromise, NestedForkError);
  nested(true)("forkProcess inside", (e) => e.app.forkProcess(fn), "forkProcess");
  nested(false)("tryForkProcess inside", (e) => e.app.tryForkProcess(fn), "tryForkProcess");
  nested(true)("awaitResult inside", (e) => e.app.awaitResult(e.handle), "awaitResult");
  nested(true)("forkAll inside", (e) => e.app.forkAll([1], fn), "forkAll");
  nested(true)("evalLang inside", (e) => e.app.evalLang(fn), "evalLang");
  nested(false)("newVar inside", (e) => e.app.newVar(0), "newVar");
  nested(true)("scope inside", (e) => e.app.scope(fn), "scope");
  nested(true)("runApp inside", (e) => e.rt.runApp(fn), "runApp");
}
const lang = (returnsPromise: boolean, error: Case["error"]) =>
  add("process", returnsPromise, error);
for (const value of [-1, NaN, Infinity]) {
  lang(true, R)(
    `delay(${value})`,
    (e) => e.lang.delay(value),
    "delay ms",
    String(value),
  );
}
lang(true, T)("delay string", (e) => e.lang.delay("1"), "delay ms", '"1"');
lang(true, T)("delay undefined", (e) => e.lang.delay(), "delay ms", "undefined");
const randomCases: [
  number | string | undefined,
  number | string | undefined,
  Case["error"],
  string[],
][] = [
  [1.5, 3, R, ["getRandomInt min", "1.5"]],
  [1, 2.5, R, ["getRandomInt max", "2.5"]],
  [1, NaN, R, ["getRandomInt max", "NaN"]],
  [-Infinity, 1, R, ["getRandomInt min", "-Infinity"]],
  [2 ** 53, 2 ** 53 + 2, R, ["getRandomInt min", "9007199254740992"]],
  ["1", 2, T, ["getRandomInt min", '"1"']],
  [1, undefined, T, ["getRandomInt max", "undefined"]],
  [5, 1, R, ["min", "max", "5", "1"]],
];
for (const [min, max, error, mentions] of randomCases) {
  lang(false, error)(
    `getRandomInt(${min}, ${max})`,
    (e) => e.lang.getRandomInt(min, max),
    ...mentions,
  );
}
for (const [value, shown] of [[{}, "an object"], [undefined, "undefined"], [5, "5"]]) {
  lang(true, T)(`readVar ${shown}`, (e) => e.lang.readVar(value), "readVar", shown as string);
  lang(true, T)(`writeVar ${shown}`, (e) => e.lang.writeVar(value, 1), "writeVar", shown as string);
  lang(true, T)(
    `modifyVar ${shown}`,
    (e) => e.lang.modifyVar(value, fn),
    "modifyVar",
    shown as string,
  );
  lang(true, T)(
    `atomically [${shown}]`,
    (e) => e.lang.atomically([e.v, value], fn),
    "atomically vars[1]",
    shown as string,
  );
}
for (const op of ["readVar", "writeVar", "modifyVar"]) {
  lang(true, T)(
    `${op}, another runtime's var`,
    (e) => e.lang[op](e.otherVar, fn),
    op,
    "another runtime",
  );
}
lang(true, T)(
  "atomically, another runtime's var",
  (e) => e.lang.atomically([e.otherVar], fn),
  "atomically",
  "another runtime",
);
lang(true, T)("modifyVar f string", (e) => e.lang.modifyVar(e.v, "f"), "modifyVar f", '"f"');
lang(true, T)("modifyVar f undefined", (e) => e.lang.modifyVar(e.v), "modifyVar f", "undefined");
lang(true, T)(
  "atomically vars string",
  (e) => e.lang.atomically("x", fn),
  "atomically vars",
  '"x"',
);
lang(true, T)(
  "atomically one var, no array",
  (e) => e.lang.atomically(e.v, fn),
  "atomically vars",
  "an object",
);
lang(true, T)(
  "atomically body string",
  (e) => e.lang.atomically([e.v], "b"),
  "atomically body",
  '"b"',
);
const logCases = [
  ["logInfo", 5, "5", "p", '"p"'],
  ["logDebug", undefined, "undefined", 5, "5"],
  ["logWarning", {}, "an object", null, "null"],
  ["logError", null, "null", true, "true"],
] as const;
for (const [op, message, shown, properties, shownProperties] of logCases) {
  lang(false, T)(`${op} message ${shown}`, (e) => e.lang[op](message), `${op} message`, shown);
  lang(false, T)(
    `${op} properties ${shownProperties}`,
    (e) => e.lang[op]("m", properties),
    `${op} properties`,
    shownProperties,
  );
}
lang(true, T)("evalIO string", (e) => e.lang.evalIO("x"), "evalIO io", '"x"');
lang(true, T)("evalIO undefined", (e) => e.lang.evalIO(), "evalIO io", "undefined");
lang(true, R)("delay(-1) inside evalLang too", (e) => e.lang.delay(-1), "delay ms", "-1");
cases.at(-1)!.where = "evalLang";

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
  const missing = c.mentions.filter((m) => !(error as Error).message.includes(m));
  if (missing.length > 0) {
    return `message "${(error as Error).message}" lacks ${missing.join(", ")}`;
  }
  const after = env.rt.stats();
  if (JSON.stringify(after) !== JSON.stringify(before)) return STATS_CHANGED;
}

Deno.test("bad input gets a named error that names the argument and the value", async () => {
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
});
