// The CPU-bound example: worker threads find what the runtime's thread finds.
import { assertEquals } from "@std/assert";
import { comparePlates } from "../examples/plate_analysis_main.ts";
import { analyse, exposePlate } from "../examples/plate_analysis.ts";

Deno.test("plate analysis: forkWorker reports what forkProcess reports", async () => {
  const { inline, workers } = await comparePlates(4, 2, 64);
  assertEquals(workers, inline);
  assertEquals(inline.map((report) => report.id), [0, 1, 2, 3]);
});

Deno.test("plate analysis leaves its plate untouched", () => {
  const plate = exposePlate(1, 32);
  const before = plate.pixels.slice();
  analyse(plate, 3);
  assertEquals(plate.pixels, before);
});
