// A "process" worker's frames: JSON when JSON carries the batch exactly,
// V8-serialised (structured clone) otherwise; values arrive the same either way.
import { assertEquals, assertThrows } from "@std/assert";
import { decodeBatch, encodeBatch } from "../src/worker/_codec.ts";

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
