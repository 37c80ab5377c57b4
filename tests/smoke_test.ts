import { assertEquals } from "@std/assert";
import { Runtime } from "../mod.ts";

Deno.test("a runtime forks, awaits and stays within its bound", async () => {
  await using runtime = new Runtime({ maxProcesses: 3 });
  let peak = 0;
  const results = await runtime.runApp((app) =>
    app.forkAll(Array.from({ length: 20 }, (_, i) => i), async (i, lang) => {
      peak = Math.max(peak, runtime.stats().active);
      await lang.delay(0);
      return i * 2;
    })
  );
  assertEquals(results, Array.from({ length: 20 }, (_, i) => i * 2));
  assertEquals(peak, 3);
  assertEquals(runtime.stats().active, 0);
});
