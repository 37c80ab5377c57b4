// A sparse array of huge length (a[2 ** 27] = 1) is sent about as fast as
// structured clone sends it: deciding whether it needs a copy walked its
// length (8 s at 2 ** 27, a hang near 2 ** 32); it walks its keys now.
import { assert, assertEquals } from "@std/assert";
import { copyDeep } from "../src/worker/_copy_deep.ts";
import { replaceDeep } from "../src/worker/_replace_deep.ts";
import { createTestRuntime } from "../testing.ts";

const scripts = new URL("./workers/review_scripts.ts", import.meta.url);

const marker = { marker: true };
const swap = (v: object) => (v === marker ? "SWAPPED" : undefined);

Deno.test("copyDeep on a sparse array of huge length", async (t) => {
  await t.step("is not linear in its length", () => {
    const a: unknown[] = [];
    a[2 ** 27] = 1;
    const start = performance.now();
    const copy = copyDeep([a], swap) as unknown[][];
    const ms = performance.now() - start;
    assert(ms < 50, `copyDeep took ${ms.toFixed(0)} ms`);
    assertEquals(copy[0], a);
  });

  await t.step("still finds what to replace in it, past the holes", () => {
    const a: unknown[] = [1];
    a[5000] = { inner: marker };
    a[2 ** 31] = 2;
    const copy = copyDeep(a, swap) as unknown[];
    assertEquals(copy.length, a.length);
    assertEquals(copy[5000], { inner: "SWAPPED" });
    assertEquals(Object.keys(copy), ["0", "5000", String(2 ** 31)]);
  });

  await t.step("finds a getter in it, past the holes", () => {
    const a: unknown[] = [];
    let reads = 0;
    Object.defineProperty(a, 3000, { get: () => ++reads, enumerable: true });
    const copy = copyDeep(a, swap) as unknown[];
    assertEquals([copy[3000], reads, Object.getOwnPropertyDescriptor(copy, 3000)?.get], [
      1,
      1,
      undefined,
    ]);
  });
});

Deno.test("replaceDeep (what a side receives) on sparse arrays", async (t) => {
  // Review: 762ab8e made the sending side walk a sparse array's keys; the
  // receiving side (the runtime's VarRefs.decode for every result and log, a
  // worker's input) still walked its length, and wrote its holes as own
  // undefined once something in it was replaced.
  await t.step("is not linear in the length", () => {
    const a: unknown[] = [];
    a[2 ** 27] = 1;
    const start = performance.now();
    const back = replaceDeep({ a }, swap) as { a: unknown[] };
    const ms = performance.now() - start;
    assert(ms < 500, `replaceDeep took ${ms.toFixed(0)} ms`);
    assert(back.a === a, "nothing replaced: the same array");
  });

  await t.step("replaces past the holes and keeps them holes", () => {
    const a: unknown[] = [marker];
    a[2] = 3;
    a[5000] = { inner: marker };
    a[2 ** 31] = marker;
    const back = replaceDeep(a, swap) as unknown[];
    assertEquals(back.length, a.length);
    assertEquals([back[0], back[2], back[5000], back[2 ** 31]], [
      "SWAPPED",
      3,
      { inner: "SWAPPED" },
      "SWAPPED",
    ]);
    assertEquals(Object.keys(back), ["0", "2", "5000", String(2 ** 31)]);
  });

  await t.step("keeps an array's named properties when it copies it", () => {
    // Structured clone carries them (a RegExp match's index and input, say);
    // the copy made for a replaced element dropped them (slice).
    for (const at of [1, 3000]) {
      const a: unknown[] = ["x"];
      a[at] = marker;
      Object.assign(a, { total: 2 });
      Object.defineProperty(a, "__proto__", { value: 7, enumerable: true });
      const back = replaceDeep(a, swap) as unknown[] & { total?: number };
      assertEquals([back[0], back[at], back.total], ["x", "SWAPPED", 2], `at ${at}`);
      assertEquals(Object.getOwnPropertyDescriptor(back, "__proto__")?.value, 7);
      assert(Array.isArray(back) && Object.getPrototypeOf(back) === Array.prototype);
      assertEquals(Object.keys(back), ["0", String(at), "total", "__proto__"]);
    }
  });
});

for (const isolation of ["thread", "process"] as const) {
  Deno.test(`forkWorker (${isolation}): holes beside a variable stay holes`, async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, workers: 1 });
    const out = await runtime.runApp(async (app) => {
      const v = app.newVar(0);
      // deno-lint-ignore no-sparse-arrays
      const input = [v, , 3];
      const result = await app.awaitResult(
        await app.forkWorker<unknown, { inputHas1: boolean; back: unknown[] }>(scripts, input, {
          export: "holeAt1",
          isolation,
        }),
      );
      return [result.inputHas1, 1 in result.back, result.back[0] === v];
    });
    assertEquals(out, [false, false, true]);
  });
}
