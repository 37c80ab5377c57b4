// A "thread" worker's lane when what it hands a batch or a frame to throws:
// the rest still goes through, and the first error comes out at the end.
import { assert, assertEquals, assertFalse } from "@std/assert";
import { LaneReceiver } from "../src/worker/_lane.ts";
import { FrameRing } from "../src/worker/_ring.ts";
import type { Batch } from "../src/worker/protocol.ts";

Deno.test("LaneReceiver delivers the batches that came early after a deliver that throws", () => {
  const delivered: number[] = [];
  const receiver = new LaneReceiver<number>((batch: Batch<number>) => {
    if (batch.m[0] === 0) throw new Error("deliver failed");
    delivered.push(...batch.m);
  });
  receiver.receive({ s: 1, now: 0, m: [1] });
  receiver.receive({ s: 2, now: 0, m: [2] });
  let thrown: unknown;
  try {
    receiver.receive({ s: 0, now: 0, m: [0] });
  } catch (error) {
    thrown = error;
  }
  assert(thrown instanceof Error && thrown.message === "deliver failed", `got ${thrown}`);
  assertEquals(delivered, [1, 2], "the early ones, though the one before them threw");
  receiver.receive({ s: 3, now: 0, m: [3] });
  assertEquals(delivered, [1, 2, 3], "and what comes after them");
});

Deno.test("FrameRing.readAll reads on and counts every frame taken when a handler throws", () => {
  const ring = FrameRing.create(1024);
  for (const text of ["a", "b", "c"]) assert(ring.tryWrite(text));
  const read: string[] = [];
  let thrown: unknown;
  try {
    ring.readAll((text) => {
      read.push(text);
      if (text === "a") throw new Error("frame failed");
    });
  } catch (error) {
    thrown = error;
  }
  assert(thrown instanceof Error && thrown.message === "frame failed", `got ${thrown}`);
  assertEquals(read, ["a", "b", "c"]);
  assertFalse(ring.pending);
  // A writer held back waits on this count: a frame read but not counted
  // would hold it for good.
  assertEquals(ring.taken, 3);
});
