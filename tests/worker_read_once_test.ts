// What crosses to a worker and back is read as structured clone reads it:
// each property once (a getter is called once), an array's holes and its
// prototype not at all, whether the batch went as JSON or, after the JSON
// walk gave up, by structured clone (postMessage, node:v8).
import { assert, assertEquals } from "@std/assert";
import { Runtime } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";
import { batchJson } from "../src/worker/_json_exact.ts";
import { encodeBatch } from "../src/worker/_codec.ts";
import { LaneSender } from "../src/worker/_lane.ts";
import { FrameRing } from "../src/worker/_ring.ts";
import { copyDeep } from "../src/worker/_copy_deep.ts";

const scripts = new URL("./workers/scripts.ts", import.meta.url);

/** An array whose element 0 is a getter counting its reads. */
function countedArray(): { array: unknown[]; reads: () => number } {
  let reads = 0;
  const array = Object.defineProperty([0, 1], 0, { get: () => ++reads, enumerable: true });
  return { array, reads: () => reads };
}

/**
 * `body`'s answer with `Array.prototype[1]` defined as `property` (only while
 * it runs: arrays made meanwhile, an assertion's too, cannot set index 1).
 */
function withArrayPrototypeIndex<T>(property: PropertyDescriptor, body: () => T): T {
  Object.defineProperty(Array.prototype, "1", { ...property, configurable: true });
  try {
    return body();
  } finally {
    delete (Array.prototype as unknown as Record<string, unknown>)["1"];
  }
}

Deno.test("the JSON walk reads an array element's getter only if it keeps the batch", async (t) => {
  await t.step("ring, then postMessage (structured clone)", () => {
    const ring = FrameRing.create(1024);
    const sender = new LaneSender<unknown>(ring, (batch) => structuredClone(batch));
    const { array, reads } = countedArray();
    sender.send({ now: 0, m: [{ t: "v", v: array }, { t: "w", v: NaN }] });
    assertEquals(reads(), 1);
  });
  await t.step("pipe: JSON, then node:v8", () => {
    const { array, reads } = countedArray();
    encodeBatch({ now: 0, m: [{ t: "done", v: [array, NaN] }] });
    assertEquals(reads(), 1);
  });
});

Deno.test("the JSON walk does not read an array's holes through its prototype", async (t) => {
  // A hole and a named property: as many own keys as the length.
  const holey = () => Object.assign([0, , 2], { named: 3 });
  await t.step("a data property on the prototype", () => {
    const text = withArrayPrototypeIndex(
      { value: 7 },
      () => batchJson({ now: 0, m: [{ t: "v", v: holey() }] }),
    );
    // Structured clone keeps the hole and the named property; JSON would send [0,7,2].
    assertEquals(text, undefined);
  });
  await t.step("a getter on the prototype", () => {
    let reads = 0;
    const texts = withArrayPrototypeIndex({ get: () => ++reads }, () => [
      batchJson({ now: 0, m: [{ t: "v", v: holey() }] }),
      batchJson({ now: 0, m: [{ t: "v", v: [0, , 2] }] }),
    ]);
    assertEquals(texts, [undefined, undefined]);
    assertEquals(reads, 0);
  });
});

for (const isolation of ["thread", "process"] as const) {
  Deno.test(`forkWorker (${isolation}): the input's getters are read once`, async () => {
    await using runtime = new Runtime({ maxProcesses: 1, workers: 1 });
    for (const fallback of [false, true]) {
      let objectReads = 0;
      let elementReads = 0;
      const input = {
        object: Object.defineProperty({}, "a", { get: () => ++objectReads, enumerable: true }),
        array: Object.defineProperty([0, 0], 1, { get: () => ++elementReads, enumerable: true }),
        nan: fallback ? NaN : 0,
      };
      const back = await runtime.runApp(async (app) =>
        app.awaitResult(await app.forkWorker(scripts, input, { export: "echo", isolation }))
      );
      assertEquals([objectReads, elementReads], [1, 1], `fallback: ${fallback}`);
      assertEquals(back, { object: { a: 1 }, array: [0, 1], nan: input.nan });
    }
  });

  Deno.test(`forkWorker (${isolation}): the result's and a log's getters are read once`, async () => {
    for (const fallback of [false, true]) {
      await using runtime = createTestRuntime({ maxProcesses: 1, workers: 1 });
      const [back, reads] = await runtime.runApp(async (app) => {
        const run = async (name: string, input: unknown) =>
          app.awaitResult(await app.forkWorker(scripts, input, { export: name, isolation }));
        return [await run("getters", fallback), await run("getterReads", 0)];
      });
      assertEquals(reads, [1, 1, 1], `fallback: ${fallback}`);
      const nan = fallback ? NaN : 0;
      assertEquals(back, { object: { a: 1 }, array: [0, 1], nan }, `fallback: ${fallback}`);
      const [entry] = runtime.logs;
      assert(entry !== undefined, "the log arrived");
      assertEquals(entry.properties, { logged: { p: 1 }, nan }, `fallback: ${fallback}`);
    }
  });
}

Deno.test("copyDeep copies as structured clone reads, each property once", () => {
  const none = () => undefined;
  let reads = 0;
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  Object.defineProperty(cyclic, "a", { get: () => ++reads, enumerable: true });
  const copy = copyDeep(cyclic, none) as Record<string, unknown>;
  assertEquals(reads, 1);
  assert(copy !== cyclic && copy.self === copy, "the cycle is the copy's");
  const cloned = structuredClone(copy);
  assertEquals([cloned.a, reads], [1, 1], "structured clone reads the copy");
  assert(cloned.self === cloned);
  // Holes, a named property and an own "__proto__" survive as structured clone keeps them.
  const holey = Object.assign([0, , 2, ,], { named: 3 });
  Object.defineProperty(holey, 0, { get: () => ++reads, enumerable: true });
  const proto = JSON.parse('{"__proto__": 1}');
  const [array, object] = copyDeep([holey, proto], none) as [unknown[], object];
  assertEquals(reads, 2);
  assertEquals(array.length, 4);
  assertEquals(Object.keys(array), ["0", "2", "named"]);
  assertEquals(Object.getPrototypeOf(object), Object.prototype);
  assertEquals(Object.keys(object), ["__proto__"]);
  // Nothing to replace and no getter: the value itself, for structured clone to read.
  const plain = { a: [1, { b: 2 }], m: new Map([[1, { c: 3 }]]) };
  assert(copyDeep(plain, none) === plain);
});
