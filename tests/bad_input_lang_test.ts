// Bad input to the LangL ops, and AppL calls made from inside a process or an
// evalLang script (the table runner and what each case must satisfy are in
// _bad_input.ts).
// deno-lint-ignore-file no-explicit-any
import { NestedForkError, Runtime } from "../mod.ts";
import { createTestRuntime, VirtualClock } from "../testing.ts";
import { type Case, caseTable, fn, runTable } from "./_bad_input.ts";

const { cases, add } = caseTable();
const T = TypeError, R = RangeError;

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
const ioOptionCases: [string, unknown, Case["error"], string, string][] = [
  ["options a string", "fast", T, "evalIO options", '"fast"'],
  ["options null", null, T, "evalIO options", "null"],
  ["shielded a string", { shielded: "yes" }, T, "evalIO options.shielded", '"yes"'],
  ["shielded 1", { shielded: 1 }, T, "evalIO options.shielded", "1"],
  ["timeoutMs -1", { timeoutMs: -1 }, R, "evalIO options.timeoutMs", "-1"],
  ["timeoutMs NaN", { timeoutMs: NaN }, R, "evalIO options.timeoutMs", "NaN"],
  ["timeoutMs a string", { timeoutMs: "5" }, T, "evalIO options.timeoutMs", '"5"'],
  ["shielded, timeoutMs -5", { shielded: true, timeoutMs: -5 }, R, "timeoutMs", "-5"],
];
for (const [label, options, error, argument, shown] of ioOptionCases) {
  lang(true, error)(
    `evalIO ${label}`,
    (e) => e.lang.evalIO(() => Promise.resolve(), options),
    argument,
    shown,
  );
}
// A variable's value is data: a Promise cannot deliver a thenable, so none may enter a variable.
const never = { then() {} };
lang(false, T)("newVar of a thenable", (e) => e.lang.newVar(never), "newVar initial", "thenable");
add("app", false, T)(
  "app.newVar of a Promise",
  (e) => e.app.newVar(Promise.resolve(1)),
  "newVar initial",
  "a Promise",
);
lang(true, T)(
  "writeVar of a never-settling thenable",
  (e) => e.lang.writeVar(e.v, never),
  "writeVar value",
  "thenable",
);
lang(true, T)(
  "tx.write of a thenable",
  (e) => e.lang.atomically([e.v], (tx: any) => tx.write(e.v, never)),
  "tx.write value",
  "thenable",
);
lang(true, T)(
  "readVar of a value that became a thenable",
  (e) => {
    const value: Record<string, unknown> = {};
    const v = e.lang.newVar(value);
    value.then = () => {}; // never settles: adopting it would hang the read
    return e.lang.readVar(v);
  },
  "readVar",
  "thenable",
);
add("top", true, T)(
  "delay on a clock whose sleep returns no promise",
  () =>
    new Runtime({ maxProcesses: 1, clock: { now: () => 0, sleep: () => undefined as never } })
      .runApp((app) => app.evalLang((lang) => lang.delay(5))),
  "clock.sleep",
  "undefined",
);
add("top", false, R)(
  "VirtualClock start 2^53",
  () => new VirtualClock(2 ** 53),
  "VirtualClock start",
  "9007199254740992",
);
add("top", false, R)(
  "createTestRuntime start -2^53",
  () => createTestRuntime({ maxProcesses: 1, start: -(2 ** 53) }),
  "VirtualClock start",
  "-9007199254740992",
);
add("top", true, R)(
  "VirtualClock advance(1e308)",
  () => new VirtualClock().advance(1e308),
  "advance ms",
  "1e+308",
);
add("evalLang", true, R)(
  "delay(-1) inside evalLang too",
  (e) => e.lang.delay(-1),
  "delay ms",
  "-1",
);

Deno.test("bad input to LangL gets a named error that names the argument and the value", async () => {
  await runTable(cases);
});
