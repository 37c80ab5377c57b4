// Bad input to forkWorker and RuntimeOptions.workers: a named error that names
// the argument and the value, and the pool unchanged afterwards.
import { assertEquals, assertRejects, assertThrows } from "@std/assert";
import { Runtime, type WorkerForkOptions } from "../mod.ts";

const scripts = new URL("./workers/scripts.ts", import.meta.url);

Deno.test("bad RuntimeOptions.workers is refused at the constructor", () => {
  for (const [workers, type] of [[0, RangeError], [1.5, RangeError], ["2", TypeError]] as const) {
    const error = assertThrows(
      () => new Runtime({ maxProcesses: 1, workers: workers as number }),
      type,
    );
    assertEquals(error.message.includes("workers"), true, error.message);
  }
});

Deno.test("bad forkWorker arguments reject with a named error, nothing started", async () => {
  await using runtime = new Runtime({ maxProcesses: 1, workers: 1 });
  const rows: [unknown, WorkerForkOptions | undefined, ErrorConstructor, string][] = [
    ["./relative.ts", undefined, TypeError, "module"],
    [42, undefined, TypeError, "module"],
    [scripts, { isolation: "fiber" as "thread" }, TypeError, "isolation"],
    [scripts, { graceMs: -1 }, RangeError, "graceMs"],
    [scripts, { graceMs: Infinity }, RangeError, "graceMs"],
    [scripts, { export: 3 as unknown as string }, TypeError, "export"],
    [scripts, { timeoutMs: -5 }, RangeError, "timeoutMs"],
  ];
  await runtime.runApp(async (app) => {
    for (const [module, options, type, names] of rows) {
      const error = await assertRejects(
        () => app.forkWorker(module as URL, 1, options),
        type as ErrorConstructor,
      );
      assertEquals(error.message.includes(names), true, error.message);
    }
  });
  assertEquals(runtime.stats().started, 0);
});
