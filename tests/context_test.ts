// Processes run in their forker's async context (plus procpool's mark), so
// request ids, LogTape's implicit contexts or tracing spans kept in an
// AsyncLocalStorage reach them, whether the process started at once or got
// its slot later by hand-off or from forkAll's feeder.
import { AsyncLocalStorage } from "node:async_hooks";
import { assertEquals } from "@std/assert";
import { backoff, Runtime } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

const request = new AsyncLocalStorage<string>();

Deno.test("a process sees its forker's async context", async (t) => {
  for (const [label, wait] of [["fifo", undefined], ["backoff", backoff({ jitter: 0 })]] as const) {
    await t.step(label, async () => {
      await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1, wait });
      const seen = await runtime.runApp(async (app) => {
        const fork = (id: string) =>
          request.run(id, () =>
            app.forkProcess(async (lang) => {
              const before = request.getStore();
              await lang.delay(10);
              return `${before}/${request.getStore()}`;
            }));
        // The first starts at once; the other two wait and get the slot later.
        const handles = await Promise.all([fork("a"), fork("b"), fork("c")]);
        return await Promise.all(handles.map((handle) => app.awaitResult(handle)));
      });
      assertEquals(seen, ["a/a", "b/b", "c/c"]);
    });
  }
  await t.step("forkAll items see the context forkAll was called in", async () => {
    await using runtime = new Runtime({ maxProcesses: 2 });
    const seen = await runtime.runApp((app) =>
      request.run("batch-7", () =>
        app.forkAll([1, 2, 3, 4, 5], async (n, lang) => {
          await lang.delay(0);
          return `${n}:${request.getStore()}`;
        }))
    );
    assertEquals(seen, ["1:batch-7", "2:batch-7", "3:batch-7", "4:batch-7", "5:batch-7"]);
  });
});
