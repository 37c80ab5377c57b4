// A "process" worker's frames: JSON when JSON carries the batch exactly,
// V8-serialised (structured clone) otherwise; values arrive the same either way.
import { assert, assertEquals, assertThrows } from "@std/assert";
import { Buffer } from "node:buffer";
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

Deno.test("encodeBatch / decodeBatch: views arrive as structured clone makes them", () => {
  const buffer = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]).buffer;
  const values: unknown[] = [
    Object.setPrototypeOf(new Uint8Array([1, 2, 3]), Object.prototype),
    Object.setPrototypeOf(new DataView(buffer, 2, 4), Object.prototype),
    Object.setPrototypeOf(new Float64Array(2), Uint8Array.prototype),
    Buffer.from([9, 10]),
    [new Uint16Array(buffer, 2, 2), new Int8Array(buffer, 1, 3)],
    new BigInt64Array([5n]),
  ];
  for (const value of values) {
    const back = decodeBatch<{ v: unknown }>(encodeBatch({ now: 0, m: [{ v: [value, NaN] }] }))
      .m[0].v as unknown[];
    const expected = structuredClone(value);
    assertEquals(back[0], expected);
    assertEquals(describeViews(back[0]), describeViews(expected));
  }
});

/** Each view's kind, buffer size, offset and length, and which views share a buffer. */
function describeViews(value: unknown): unknown {
  const views = (Array.isArray(value) ? value : [value]) as ArrayBufferView[];
  return views.map((view) => {
    const kind = Object.prototype.toString.call(view);
    const parts = view instanceof DataView || ArrayBuffer.isView(view)
      ? [view.buffer.byteLength, view.byteOffset, view.byteLength, view.buffer === views[0].buffer]
      : [];
    return [kind, ...parts];
  });
}

Deno.test("encodeBatch / decodeBatch: buffers arrive as structured clone makes them", async (t) => {
  const roundTrip = (value: unknown): unknown =>
    (decodeBatch<{ v: unknown }>(encodeBatch({ now: 0, m: [{ v: [value, NaN] }] })).m[0]
      .v as unknown[])[0];

  await t.step("an ArrayBuffer beside a view of it stays that view's buffer", () => {
    const buffer = new ArrayBuffer(8);
    const value = { buffer, view: new Uint8Array(buffer, 2, 4), other: new Int8Array(buffer) };
    const expected = structuredClone(value);
    const back = roundTrip(value) as typeof value;
    assertEquals(
      [back.view.buffer === back.buffer, back.other.buffer === back.buffer],
      [expected.view.buffer === expected.buffer, expected.other.buffer === expected.buffer],
    );
    assertEquals(back, expected);
  });

  await t.step("a resizable buffer stays resizable", () => {
    const buffer = new ArrayBuffer(4, { maxByteLength: 16 });
    const expected = structuredClone(new Uint8Array(buffer, 1, 2)) as Uint8Array<ArrayBuffer>;
    const back = roundTrip(new Uint8Array(buffer, 1, 2)) as Uint8Array<ArrayBuffer>;
    assertEquals(
      [back.buffer.resizable, back.buffer.maxByteLength, back.byteOffset, back.length],
      [expected.buffer.resizable, expected.buffer.maxByteLength, 1, 2],
    );
  });

  await t.step("a view of a detached buffer is refused", () => {
    const buffer = new ArrayBuffer(8);
    const view = new Uint8Array(buffer);
    structuredClone(buffer, { transfer: [buffer] });
    assertThrows(() => structuredClone(view));
    assertThrows(() => encodeBatch({ now: 0, m: [{ v: [view, NaN] }] }));
  });
});

Deno.test("encodeBatch / decodeBatch: a view of a SharedArrayBuffer arrives as a copy", () => {
  // Review of 549a9b1: writing the view's buffer through node:v8 refused a
  // SharedArrayBuffer ("could not be cloned"); before, the view was copied.
  const shared = new SharedArrayBuffer(4);
  const first = new Uint8Array(shared);
  first[0] = 7;
  const second = new Uint8Array(shared, 1, 2);
  const back = decodeBatch<{ v: unknown }>(
    encodeBatch({ now: 0, m: [{ v: [first, second, NaN] }] }),
  ).m[0].v as Uint8Array[];
  assertEquals(Array.from(back[0]), [7, 0, 0, 0]);
  assert(!(back[0].buffer instanceof SharedArrayBuffer), "a copy, not shared");
  assert(back[1].buffer === back[0].buffer, "both views of one buffer share its copy");
});
