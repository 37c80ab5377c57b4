// A "process" worker's frames: JSON when JSON carries the batch exactly,
// V8-serialised (structured clone) otherwise; values arrive the same either way.
import { assert, assertEquals, assertThrows } from "@std/assert";
import { Runtime } from "../mod.ts";
import { decodeBatch, encodeBatch } from "../src/worker/_codec.ts";

const scripts = new URL("./workers/scripts.ts", import.meta.url);

Deno.test("encodeBatch / decodeBatch: JSON for what JSON carries exactly, V8 for the rest", () => {
  const json = encodeBatch({ now: 5, m: [{ t: "done", v: { a: [1, "b"] } }] });
  assertEquals(json[0], 1, "JSON");
  assertEquals(decodeBatch(json), { now: 5, m: [{ t: "done", v: { a: [1, "b"] } }] });
  const value = new Map<unknown, unknown>([[1, new Date(3)], ["nan", NaN]]);
  const v8 = encodeBatch({ now: 5, m: [{ t: "done", v: value }] });
  assertEquals(v8[0], 0, "V8");
  assertEquals(decodeBatch(v8), { now: 5, m: [{ t: "done", v: value }] });
  assertThrows(() => encodeBatch({ now: 0, m: [{ t: "done", v: () => 1 }] }));
});

Deno.test("forkWorker (process): values round-trip as structured clone makes them, either way", async () => {
  await using runtime = new Runtime({ maxProcesses: 1, workers: 1 });
  const shared = { n: 1 };
  const values: unknown[] = [
    21,
    "text",
    { nested: [1, { deep: "x" }] },
    -0,
    NaN,
    [1, , undefined],
    { a: undefined },
    new Date(5),
    new Map([[1, { m: true }]]),
    undefined,
  ];
  await runtime.runApp(async (app) => {
    for (const value of values) {
      const handle = await app.forkWorker(scripts, value, { export: "echo", isolation: "process" });
      const back = await app.awaitResult(handle);
      assertEquals(back, structuredClone(value));
      if (typeof value === "number") assert(Object.is(back, value), `${value}`);
    }
    const pair = await app.awaitResult(
      await app.forkWorker<unknown, { n: number }[]>(scripts, [shared, shared], {
        export: "echo",
        isolation: "process",
      }),
    );
    assert(pair[0] === pair[1], "a shared object stays shared");
  });
});
