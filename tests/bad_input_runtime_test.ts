// deno-lint-ignore-file no-explicit-any
// Bad input outside any app: the Runtime constructor, backoff(), VirtualClock,
// createTestRuntime, runApp, and a disposed runtime (the table runner and what
// each case must satisfy are in _bad_input.ts).
import { backoff, fifo, Runtime, RuntimeDisposedError } from "../mod.ts";
import { createTestRuntime, VirtualClock } from "../testing.ts";
import { type Case, caseTable, fn, ok, runTable } from "./_bad_input.ts";

const { cases, add } = caseTable();
const T = TypeError, R = RangeError;

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
// Only safe integers: 1.5 would draw what 1 draws, 1e300 and 2^64 what 0 draws.
for (const value of [NaN, Infinity, -Infinity, 1.5, -0.5, 2 ** 53, -(2 ** 53), 1e300, 2 ** 64]) {
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
// Hand-made policies are not validated policies: { kind: "backoff" } slept NaN ms.
for (const value of [{ kind: "backoff" }, { kind: "fifo" }]) {
  top(T)(
    `wait ${JSON.stringify(value)}`,
    () => new Runtime({ ...ok, wait: value as any }),
    "wait",
    "an object",
  );
}
// A logger is checked for every method procpool calls, not only the first two.
const logger = { isEnabledFor: () => true, debug() {}, info() {}, warn() {}, error() {} };
for (const method of ["isEnabledFor", "debug", "info", "warn", "error"]) {
  const { [method as keyof typeof logger]: _, ...partial } = logger;
  top(T)(
    `logger without ${method}`,
    () => new Runtime({ ...ok, logger: partial as any }),
    "logger",
    method,
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

Deno.test("bad input to the runtime, backoff, VirtualClock and createTestRuntime gets a named error that names the argument and the value", async () => {
  await runTable(cases);
});
