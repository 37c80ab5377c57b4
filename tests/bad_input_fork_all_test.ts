// deno-lint-ignore-file no-explicit-any
// Sources that break the iterator protocol (API.md point 10): forkAll checks
// each step as `for...of` and `for await` do. A step that is not an object is
// a TypeError, never an `undefined` item, and forkAll settles (no unhandled
// rejection); a next() that never settles does not keep the signal from
// ending the call. The table runner is in _bad_input.ts.
import { caseTable, fn, runTable } from "./_bad_input.ts";

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

Deno.test("forkAll refuses a source that breaks the iterator protocol", async () => {
  await runTable(cases);
});
