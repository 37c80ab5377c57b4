// bench:fleet's figures come from merged hold intervals of several OS
// processes; these pin down how they are computed, on hand-made timelines.
import { assertAlmostEquals, assertEquals } from "@std/assert";
import {
  completedPerSecond,
  handoffs,
  type Hold,
  maxConcurrency,
  utilisation,
} from "../bench/_fleet_analysis.ts";

const hold = (proc: number, start: number, end: number): Hold => ({ proc, start, end });
const ALL = { from: 0, to: 1e9 };

Deno.test("fleet analysis", async (t) => {
  await t.step("max concurrency: an end at t comes before a start at t", () => {
    assertEquals(maxConcurrency([hold(0, 0, 10), hold(1, 10, 20), hold(2, 5, 15)]), 2);
    assertEquals(maxConcurrency([hold(0, 0, 10), hold(1, 9, 20), hold(2, 5, 15)]), 3);
    assertEquals(maxConcurrency([]), 0);
  });

  await t.step("utilisation and completions are clipped to the window", () => {
    const holds = [hold(0, 0, 100), hold(1, 50, 150), hold(0, 100, 400)];
    // Window [100, 200): 0 + 50 + 100 held, of 2 × 100 capacity.
    assertAlmostEquals(utilisation(holds, 2, { from: 100, to: 200 }), 0.75);
    // Ends at 150 (inside) and 100 (inside, from is inclusive); 400 is outside.
    assertEquals(completedPerSecond(holds, { from: 100, to: 200 }), 2 / 100e-6);
  });

  await t.step("a start pairs with a release by another process, when full", () => {
    // Limit 2, full from 0 to 10. Process 1 releases at 10, process 2 starts at 13.
    const holds = [hold(0, 0, 30), hold(1, 0, 10), hold(2, 13, 30)];
    assertEquals(handoffs(holds, 2, ALL), { cross: [3], local: [], unpaired: 2 });
  });

  await t.step("its own process's release counts as local, not cross-process", () => {
    const holds = [hold(0, 0, 30), hold(1, 0, 10), hold(1, 11, 30)];
    assertEquals(handoffs(holds, 2, ALL), { cross: [], local: [1], unpaired: 2 });
  });

  await t.step("a start whose own process released is local, even if others released", () => {
    // Limit 2: process 0 releases at 10, process 1 at 12; process 1 starts at 14
    // (maybe handed its own slot: local, 2 µs), then again at 15 (only process
    // 0's release is left: cross, 5 µs).
    const holds = [hold(0, 0, 10), hold(1, 0, 12), hold(1, 14, 30), hold(1, 15, 30)];
    assertEquals(handoffs(holds, 2, ALL), { cross: [5], local: [2], unpaired: 2 });
    // Had process 0 started at 15, its own release would be pending: local too.
    const other = [hold(0, 0, 10), hold(1, 0, 12), hold(1, 14, 30), hold(0, 15, 30)];
    assertEquals(handoffs(other, 2, ALL), { cross: [], local: [2, 5], unpaired: 2 });
  });

  await t.step("a start with several others' releases pending takes the latest", () => {
    // Limit 2: processes 0 and 1 release at 10 and 12; process 2 starts at 15.
    const holds = [hold(0, 0, 10), hold(1, 0, 12), hold(2, 15, 30)];
    assertEquals(handoffs(holds, 2, ALL), { cross: [3], local: [], unpaired: 2 });
  });

  await t.step("a release while the fleet is not full explains nothing", () => {
    // Limit 3, only 2 open: the release at 10 is not pending, the start at 20 is unpaired.
    const holds = [hold(0, 0, 30), hold(1, 0, 10), hold(2, 20, 30)];
    assertEquals(handoffs(holds, 3, ALL), { cross: [], local: [], unpaired: 3 });
  });

  await t.step("once full again, older releases are forgotten", () => {
    // Limit 1: 0 releases at 10, 1 starts at 12 (full again), 1 releases at 20
    // and 2 starts at 25: paired with 20, never with 10.
    const holds = [hold(0, 0, 10), hold(1, 12, 20), hold(2, 25, 30)];
    assertEquals(handoffs(holds, 1, ALL), { cross: [2, 5], local: [], unpaired: 1 });
  });

  await t.step("only starts inside the window are recorded", () => {
    const holds = [hold(0, 0, 10), hold(1, 12, 20), hold(2, 25, 30)];
    assertEquals(handoffs(holds, 1, { from: 20, to: 100 }), {
      cross: [5],
      local: [],
      unpaired: 0,
    });
  });
});
