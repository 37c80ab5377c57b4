// A queued fork's record and a batch's wait are what a granted slot fulfils a
// promise with, and fulfilling with an object looks up its `then`: without
// one on the object's own prototype, the lookup walks the whole prototype
// chain, once per hand-off (about 0.15 µs) and once per wave of a forkAll
// (3-4 % of forkAll's CPU over 200 000 items; BENCHMARKS.md, "forkAll after
// 8626bf8"). Both answer it at once, with undefined: neither is a thenable.
import { assert, assertStrictEquals } from "@std/assert";
import { BatchWait } from "../src/app/_batch_wait.ts";
import { ForkedRecord } from "../src/app/_records.ts";

for (
  const [name, prototype] of [
    ["a queued fork's record (ForkedRecord)", ForkedRecord.prototype],
    ["a batch's wait (BatchWait)", BatchWait.prototype],
  ] as const
) {
  Deno.test(`${name} has a then of undefined on its own prototype`, () => {
    assert(Object.hasOwn(prototype, "then"));
    assertStrictEquals((prototype as { then?: unknown }).then, undefined);
  });
}
