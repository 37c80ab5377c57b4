// The fifo wait line's queue (src/runtime/_ring_line.ts): a ring in one
// array whose entries can leave from the middle. Checked against a plain
// array model over random sequences of operations, across growth, holes and
// wrap-around.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import fc from "fast-check";
import { RingEntry, RingLine } from "../src/runtime/_ring_line.ts";

class Entry extends RingEntry {
  constructor(readonly n: number) {
    super();
  }
}

type Op =
  | { kind: "push" }
  | { kind: "shift" }
  | { kind: "peek" }
  | { kind: "remove"; pick: number }
  | { kind: "removeStale"; pick: number }
  | { kind: "removeWhere"; modulo: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 16, arbitrary: fc.constant({ kind: "push" } as const) },
  { weight: 6, arbitrary: fc.constant({ kind: "shift" } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: "peek" } as const) },
  { weight: 4, arbitrary: fc.nat().map((pick) => ({ kind: "remove", pick }) as const) },
  { weight: 2, arbitrary: fc.nat().map((pick) => ({ kind: "removeStale", pick }) as const) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 2, max: 7 }).map((modulo) =>
      ({ kind: "removeWhere", modulo }) as const
    ),
  },
);

Deno.test("RingLine behaves as a FIFO array with removal from the middle", async (t) => {
  await t.step("random operations agree with the model", () => {
    // Runs whose line grew after its head had moved (the ring wrapped).
    let grewWrapped = 0;
    fc.assert(
      fc.property(fc.array(op, { minLength: 50, maxLength: 400, size: "max" }), (ops) => {
        let shifted = false;
        let counted = false;
        const line = new RingLine<Entry>();
        let model: Entry[] = [];
        const gone: Entry[] = [];
        let next = 0;
        for (const step of ops) {
          switch (step.kind) {
            case "push": {
              const entry = new Entry(next++);
              line.push(entry);
              model.push(entry);
              break;
            }
            case "shift": {
              const expected = model.shift();
              assertStrictEquals(line.shift(), expected);
              shifted ||= expected !== undefined;
              if (expected !== undefined) gone.push(expected);
              break;
            }
            case "peek":
              assertStrictEquals(line.peek(), model[0]);
              break;
            case "remove": {
              if (model.length === 0) break;
              const entry = model[step.pick % model.length];
              assert(line.remove(entry));
              model = model.filter((other) => other !== entry);
              gone.push(entry);
              break;
            }
            case "removeStale": {
              // Served or removed already: a second removal is refused.
              if (gone.length === 0) break;
              assertEquals(line.remove(gone[step.pick % gone.length]), false);
              break;
            }
            case "removeWhere": {
              const matches = (entry: Entry) => entry.n % step.modulo === 0;
              const removed = line.removeWhere(matches);
              assertEquals(removed, model.filter(matches));
              model = model.filter((entry) => !matches(entry));
              gone.push(...removed);
              break;
            }
          }
          assertEquals(line.size, model.length);
          assertEquals([...line], model);
          if (shifted && !counted && model.length > 16) {
            counted = true;
            grewWrapped++;
          }
        }
      }),
      { numRuns: Number(Deno.env.get("PROCPOOL_RUNS") ?? 200) },
    );
    assert(grewWrapped > 10, `only ${grewWrapped} runs grew a wrapped ring`);
  });

  await t.step("an entry removed from one line is not taken for another's", () => {
    const first = new RingLine<Entry>();
    const second = new RingLine<Entry>();
    const a = new Entry(0);
    const b = new Entry(1);
    first.push(a);
    second.push(b);
    // Both sit in slot 0 of their own ring.
    assertEquals(second.remove(a), false);
    assertStrictEquals(second.shift(), b);
    assertStrictEquals(first.shift(), a);
  });

  await t.step("a large line gives its array back once empty, and goes on in order", () => {
    const line = new RingLine<Entry>();
    const many = Array.from({ length: 70_000 }, (_, n) => new Entry(n));
    for (const entry of many) line.push(entry);
    for (const entry of many) assertStrictEquals(line.shift(), entry);
    assertEquals(line.size, 0);
    const after = [new Entry(-1), new Entry(-2)];
    for (const entry of after) line.push(entry);
    assertEquals([...line], after);
    assertEquals(line.remove(many[5]), false);
    assertStrictEquals(line.shift(), after[0]);
    assertStrictEquals(line.shift(), after[1]);
    assertStrictEquals(line.shift(), undefined);
  });

  await t.step("withdrawn entries behind a waiting one do not grow the ring", () => {
    // One fork waits for a long time while others queue behind it and are
    // withdrawn (their signal aborts): the holes they leave are reused.
    const line = new RingLine<Entry>();
    const waiting = new Entry(-1);
    line.push(waiting);
    for (let n = 0; n < 100_000; n++) {
      const entry = new Entry(n);
      line.push(entry);
      assert(line.remove(entry));
    }
    assertEquals(line.slotCount, 16);
    // A few still queued among the holes keep their order across compactions.
    const kept = Array.from({ length: 5 }, (_, n) => new Entry(1_000_000 + n));
    for (const entry of kept) {
      line.push(entry);
      for (let n = 0; n < 20; n++) {
        const gone = new Entry(n);
        line.push(gone);
        assert(line.remove(gone));
      }
    }
    assertEquals(line.slotCount, 16);
    assertEquals([...line], [waiting, ...kept]);
    assertStrictEquals(line.shift(), waiting);
    for (const entry of kept) assertStrictEquals(line.shift(), entry);
  });
});
