// What crosses to a worker and back arrives as structured clone makes it,
// whether it went as JSON (a thread's ring, a process's JSON frame) or by
// structured clone (postMessage, a V8-serialised frame).
import { assert, assertEquals } from "@std/assert";
import { Buffer } from "node:buffer";
import { Runtime } from "../mod.ts";

const scripts = new URL("./workers/scripts.ts", import.meta.url);

/** A value's prototype's constructor, for what assertEquals does not tell apart. */
const kind = (value: unknown): string | undefined =>
  value === null || typeof value !== "object"
    ? typeof value
    : (Object.getPrototypeOf(value)?.constructor as { name?: string } | undefined)?.name;

for (const isolation of ["thread", "process"] as const) {
  Deno.test(`forkWorker (${isolation}): values round-trip as structured clone makes them`, async () => {
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
      "long ".repeat(20_000),
      undefined,
      // A Date given Object.prototype is still a Date to structured clone (review: JSON sent `{}`).
      { d: Object.setPrototypeOf(new Date(7), Object.prototype) },
      // Views given Object.prototype, and a Buffer: structured clone makes plain views of
      // their kind (node:v8 refused the first two and kept the Buffer a Buffer).
      Object.setPrototypeOf(new Uint8Array([1, 2, 3]), Object.prototype),
      { v: Object.setPrototypeOf(new DataView(new Uint8Array([4, 5]).buffer), Object.prototype) },
      Buffer.from([6, 7]),
      // Review: the JSON way's check for built-in internals read the tag, calling its getter.
      {
        t: {
          a: 1,
          get [Symbol.toStringTag](): string {
            throw new Error("the tag was read");
          },
        },
      },
      // A boxed BigInt given Object.prototype has Object's tag, and is still one.
      { b: Object.setPrototypeOf(Object(1n), Object.prototype) },
    ];
    await runtime.runApp(async (app) => {
      for (const value of values) {
        const back = await app.awaitResult(
          await app.forkWorker(scripts, value, { export: "echo", isolation }),
        );
        const expected = structuredClone(value);
        assertEquals(back, expected);
        assertEquals(kind(back), kind(expected));
        if (typeof value === "number") assert(Object.is(back, value), `${value}`);
      }
      const pair = await app.awaitResult(
        await app.forkWorker<unknown, { n: number }[]>(scripts, [shared, shared], {
          export: "echo",
          isolation,
        }),
      );
      assert(pair[0] === pair[1], "a shared object stays shared");
      const tagged = await app.awaitResult(
        await app.forkWorker(scripts, undefined, { export: "throwingTag", isolation }),
      );
      assertEquals(tagged, { a: 1 });
    });
  });
}

Deno.test("forkWorker (thread): a Proxy input is refused as structured clone refuses it", async () => {
  await using runtime = new Runtime({ maxProcesses: 1, workers: 1 });
  await runtime.runApp(async (app) => {
    const handle = await app.forkWorker(scripts, new Proxy({ a: 1 }, {}), { export: "echo" });
    const error = await app.awaitResult(handle).then(() => undefined, (error) => error);
    assert(error instanceof Error, "the process failed");
    assert(/could not be sent|cloned/i.test(String(error) + String(error.cause)), String(error));
  });
});

Deno.test("forkWorker (thread): what structured clone refuses is refused, whichever way it would go", async (t) => {
  await using runtime = new Runtime({ maxProcesses: 1, workers: 1 });
  const refused = async (input: unknown): Promise<unknown> =>
    await runtime.runApp(async (app) => {
      const handle = await app.forkWorker(scripts, input, { export: "echo" });
      return await app.awaitResult(handle).then(() => undefined, (error) => error);
    });
  await t.step("an arguments object", async () => {
    const args = (function (..._: unknown[]) {
      return arguments;
    })(1, 2);
    const error = await refused({ args });
    assert(error instanceof Error, "the process failed");
    const text = String(error) + String((error as Error).cause);
    assert(/could not be sent|cloned/i.test(text), text);
  });
  await t.step("a WeakMap given Object.prototype", async () => {
    const error = await refused({ w: Object.setPrototypeOf(new WeakMap(), Object.prototype) });
    assert(error instanceof Error, "the process failed");
  });
  await t.step("a generator object given Object.prototype", async () => {
    const generator = (function* () {})();
    const error = await refused({ g: Object.setPrototypeOf(generator, Object.prototype) });
    assert(error instanceof Error, "the process failed");
  });
  await t.step("a value nested 5000 deep", async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5000; i++) deep = [deep];
    const error = await refused(deep);
    assert(error instanceof Error, "the process failed");
  });
});

Deno.test("forkWorker (thread): a value deeper than the JSON way takes still round-trips", async () => {
  await using runtime = new Runtime({ maxProcesses: 1, workers: 1 });
  let deep: unknown = "leaf";
  for (let i = 0; i < 300; i++) deep = { d: deep };
  const back = await runtime.runApp(async (app) =>
    app.awaitResult(await app.forkWorker(scripts, deep, { export: "echo" }))
  );
  assertEquals(back, deep);
});
