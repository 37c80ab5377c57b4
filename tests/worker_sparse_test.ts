// A sparse array of huge length (a[2 ** 27] = 1) is sent about as fast as
// structured clone sends it: deciding whether it needs a copy walked its
// length (8 s at 2 ** 27, a hang near 2 ** 32); it walks its keys now.
import { assert, assertEquals } from "@std/assert";
import { copyDeep } from "../src/worker/_copy_deep.ts";

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
