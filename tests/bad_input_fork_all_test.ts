// deno-lint-ignore-file no-explicit-any
// Bad input to forkAllSettled and forkStream, and sources that break the
// iterator protocol (API.md point 10): the batches check each step as
// `for...of` and `for await` do. A step that is not an object is
// a TypeError, never an `undefined` item, and forkAll settles (no unhandled
// rejection); a next() that never settles does not keep the signal from
// ending the call. The table runner is in _bad_input.ts.
import { NestedForkError, ScopeClosedError } from "../mod.ts";
import { type Case, caseTable, fn, runTable } from "./_bad_input.ts";

const { cases, add } = caseTable();
const T = TypeError;

/** An iterable whose iterator's next() is `next`. */
function syncSource(next: () => unknown): Iterable<unknown> {
  return { [Symbol.iterator]: () => ({ next }) as any };
}

function asyncSource(next: () => unknown): AsyncIterable<unknown> {
  return { [Symbol.asyncIterator]: () => ({ next }) as any };
}

const steps: [unknown, string][] = [[5, "5"], [undefined, "undefined"], [null, "null"], [
  "s",
  '"s"',
]];
for (const [value, shown] of steps) {
  add("app", true, T)(
    `forkAll, sync next() returns ${shown}`,
    (e) => e.app.forkAll(syncSource(() => value), fn),
    "forkAll items",
    "next()",
    shown,
  );
  add("app", true, T)(
    `forkAll, async next() resolves ${shown}`,
    (e) => e.app.forkAll(asyncSource(() => Promise.resolve(value)), fn),
    "forkAll items",
    "next()",
    shown,
  );
  add("app", true, T)(
    `forkAll, async next() returns ${shown} without a promise`,
    (e) => e.app.forkAll(asyncSource(() => value), fn),
    "forkAll items",
    "next()",
    shown,
  );
  add("app", true, T)(
    `forkAll, [Symbol.iterator]() returns ${shown}`,
    (e) => e.app.forkAll({ [Symbol.iterator]: () => value }, fn),
    "forkAll items",
    "[Symbol.iterator]()",
    shown,
  );
  add("app", true, T)(
    `forkAll, [Symbol.asyncIterator]() returns ${shown}`,
    (e) => e.app.forkAll({ [Symbol.asyncIterator]: () => value }, fn),
    "forkAll items",
    "[Symbol.asyncIterator]()",
    shown,
  );
}
add("app", true, T)(
  "forkAll, a step whose done getter throws",
  (e) =>
    e.app.forkAll(
      syncSource(() => ({
        get done(): boolean {
          throw new TypeError("done getter of step 0");
        },
      })),
      fn,
    ),
  "done getter",
);
add("app", true, RangeError)(
  "forkAll, async next() never settles, then the signal aborts",
  (e) => {
    const controller = new AbortController();
    return e.app.forkAll(
      asyncSource(() => {
        queueMicrotask(() => controller.abort(new RangeError("gave up waiting for next()")));
        return new Promise(() => {});
      }),
      fn,
      { signal: controller.signal },
    );
  },
  "gave up waiting",
);

// forkAllSettled rejects and forkStream (synchronous) throws, for the same
// bad input as forkAll; a stream's reads reject for a broken source.
const R = RangeError;
const batchCases: [string, (e: any, op: string) => unknown, Case["error"], string[]][] = [
  ["items 5", (e, op) => e.app[op](5, fn), T, ["items", "5"]],
  ['process "x"', (e, op) => e.app[op]([1], "x"), T, ["process", '"x"']],
  ["timeoutMs -1", (e, op) => e.app[op]([1], fn, { timeoutMs: -1 }), R, ["timeoutMs", "-1"]],
  ["options null", (e, op) => e.app[op]([1], fn, null), T, ["options", "null"]],
];
for (const [label, call, error, mentions] of batchCases) {
  add("app", true, error)(
    `forkAllSettled ${label}`,
    (e) => call(e, "forkAllSettled"),
    "forkAllSettled",
    ...mentions,
  );
  add("app", false, error)(
    `forkStream ${label}`,
    (e) => call(e, "forkStream"),
    "forkStream",
    ...mentions,
  );
}
for (const [label, app] of [["ended", "closedApp"], ["disposed", "disposedApp"]] as const) {
  add("app", true, ScopeClosedError)(
    `forkAllSettled after its scope ${label}`,
    (e) => e[app].forkAllSettled([1], fn),
    "forkAllSettled",
  );
  add("app", false, ScopeClosedError)(
    `forkStream after its scope ${label}`,
    (e) => e[app].forkStream([1], fn),
    "forkStream",
  );
}
for (const where of ["process", "evalLang"] as const) {
  add(where, true, NestedForkError)(
    `forkAllSettled inside ${where}`,
    (e) => e.app.forkAllSettled([1], fn),
    "forkAllSettled",
  );
  add(where, false, NestedForkError)(
    `forkStream inside ${where}`,
    (e) => e.app.forkStream([1], fn),
    "forkStream",
  );
}
add("app", true, T)(
  "forkStream read, sync next() returns 5",
  (e) => e.app.forkStream(syncSource(() => 5), fn).next(),
  "forkStream items",
  "next()",
  "5",
);
add("app", true, T)(
  "forkAllSettled, async next() resolves null",
  (e) => e.app.forkAllSettled(asyncSource(() => Promise.resolve(null)), fn),
  "forkAllSettled items",
  "next()",
  "null",
);

Deno.test("forkAll, forkAllSettled and forkStream refuse bad input and broken sources", async () => {
  await runTable(cases);
});
