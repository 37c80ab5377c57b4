// What a forkAll item's script returns is still the script's code (API.md
// rule 6), in the batch's lane as for a single fork
// (script_end_guard_test.ts): a promise's own `then`, or a thenable's, runs
// marked as the script, never as procpool's own code in the lane.
import { assertEquals } from "@std/assert";
import { Runtime } from "../mod.ts";
import { appLFrom } from "./_applfrom.ts";

Deno.test("a forkAll item's returned promise or thenable is the script's code", async (t) => {
  for (const shape of ["own then", "thenable"] as const) {
    await t.step(shape, async () => {
      await using runtime = new Runtime({ maxProcesses: 2 });
      const seen: string[] = [];
      await runtime.runApp(async (app) => {
        const results = await app.forkAll([1, 2, 3, 4], (item: number) => {
          if (shape === "thenable") {
            return {
              then(resolve: (value: number) => void) {
                seen.push(appLFrom(app));
                resolve(item);
              },
            } as unknown as Promise<number>;
          }
          // deno-lint-ignore no-explicit-any
          const promise: any = Promise.resolve(item);
          promise.then = function (onFulfilled: unknown, onRejected: unknown) {
            seen.push(appLFrom(app));
            // deno-lint-ignore no-explicit-any
            return Promise.prototype.then.call(this, onFulfilled as any, onRejected as any);
          };
          return promise;
        });
        assertEquals(results, [1, 2, 3, 4]);
      });
      assertEquals(seen.filter((from) => from === "allowed"), []);
    });
  }
});
