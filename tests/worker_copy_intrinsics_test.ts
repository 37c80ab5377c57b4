// copyDeep reads Maps and Sets by their own contents, as structured clone
// does, not through a subclass's iterator; and an object with an own
// Symbol.toStringTag is copied (its variables replaced) like any plain object.
import { assertEquals } from "@std/assert";
import { copyDeep } from "../src/worker/_copy_deep.ts";

const marker = { marker: true };
const swap = (v: object) => (v === marker ? "SWAPPED" : undefined);

Deno.test("copyDeep: Map and Set subclasses with their own iterators", async (t) => {
  await t.step("a Map's entries, not what its iterator yields", () => {
    let calls = 0;
    class FakeMap extends Map<unknown, unknown> {
      override *[Symbol.iterator](): MapIterator<[unknown, unknown]> {
        calls++;
        yield ["fake", marker];
      }
    }
    const m = new FakeMap();
    Map.prototype.set.call(m, "real", marker);
    const copy = copyDeep({ m }, swap) as { m: Map<unknown, unknown> };
    assertEquals([...Map.prototype.entries.call(copy.m)], [["real", "SWAPPED"]]);
    assertEquals(calls, 0);
  });

  await t.step("a Set's values, not what its iterator yields", () => {
    let calls = 0;
    class FakeSet extends Set<unknown> {
      override *[Symbol.iterator](): SetIterator<unknown> {
        calls++;
        yield "fake";
      }
    }
    const s = new FakeSet();
    Set.prototype.add.call(s, marker);
    const copy = copyDeep({ s }, swap) as { s: Set<unknown> };
    assertEquals([...Set.prototype.values.call(copy.s)], ["SWAPPED"]);
    assertEquals(calls, 0);
  });
});

Deno.test("copyDeep: a variable inside an object with an own Symbol.toStringTag is replaced", () => {
  let tagReads = 0;
  const tagged = Object.defineProperty({ v: marker }, Symbol.toStringTag, {
    get: () => `Tagged${++tagReads}`,
  });
  const copy = copyDeep({ tagged }, swap) as { tagged: Record<PropertyKey, unknown> };
  assertEquals(copy.tagged, { v: "SWAPPED" });
  assertEquals(tagReads, 0);
  // A Date given Object.prototype and a tag is still a Date to structured clone.
  const date = Object.setPrototypeOf(new Date(5), Object.prototype);
  Object.defineProperty(date, Symbol.toStringTag, { value: "X" });
  const out = copyDeep({ date, v: marker }, swap) as { date: unknown };
  assertEquals(out.date, date);
});
