// A batch's table of running items (src/app/_live_items.ts): whatever the
// order items are admitted and stop in, it holds exactly those admitted and
// not stopped, and lists them in admission order, across its growth and the
// collisions of indices that share their low bits.
import { assertEquals } from "@std/assert";
import fc from "fast-check";
import { LiveItems } from "../src/app/_live_items.ts";
import type { ItemRecord } from "../src/app/_records.ts";

const RUNS = Number(Deno.env.get("PROCPOOL_RUNS") ?? 200);

/** What the table reads of an item record: its index and its process id. */
function item(tag: number, id: number): ItemRecord {
  return { tag, id } as ItemRecord;
}

Deno.test("LiveItems", async (t) => {
  await t.step("holds what was added and not removed, in admission order", () => {
    fc.assert(
      fc.property(
        // Each step admits the next item (index bumped by a gap, so that
        // indices collide in the table), or stops one of the live items.
        fc.array(fc.oneof(fc.nat(40).map((gap) => ({ gap })), fc.nat().map((pick) => ({ pick }))), {
          maxLength: 300,
        }),
        (steps) => {
          const table = new LiveItems();
          const live: ItemRecord[] = [];
          let tag = 0;
          let id = 0;
          for (const step of steps) {
            if ("gap" in step) {
              tag += step.gap;
              const record = item(tag, ++id);
              table.add(record);
              live.push(record);
            } else if (live.length > 0) {
              const [record] = live.splice(step.pick % live.length, 1);
              table.remove(record);
            }
            assertEquals(table.size, live.length);
          }
          assertEquals(table.toArray(), live);
        },
      ),
      { numRuns: RUNS },
    );
  });

  await t.step("removing an item it does not hold changes nothing", () => {
    const table = new LiveItems();
    const held = item(3, 1);
    table.add(held);
    table.remove(item(3, 2));
    table.remove(item(19, 3));
    assertEquals(table.toArray(), [held]);
  });
});
