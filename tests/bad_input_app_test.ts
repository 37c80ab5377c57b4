// Bad input to the AppL methods of a scope body, and any AppL call on a scope
// that has ended or whose runtime was disposed (the table runner and what each
// case must satisfy are in _bad_input.ts).
import { ScopeClosedError } from "../mod.ts";
import { type Case, caseTable, fn, runTable } from "./_bad_input.ts";

const { cases, add } = caseTable();
const T = TypeError, R = RangeError;

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

Deno.test("bad input to AppL gets a named error that names the argument and the value", async () => {
  await runTable(cases);
});
