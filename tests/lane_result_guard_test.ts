// The line between a forkAll item's script and procpool's bookkeeping
// (API.md rule 6), in the batch's lane as for a single fork
// (script_end_guard_test.ts): what the script returns is still the script's
// code (a promise's own `then`, or a thenable's, runs marked as the script),
// and what it did to the async context stops at its end.
import { AsyncLocalStorage } from "node:async_hooks";
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

Deno.test("a forkAll item's enterWith does not reach the bookkeeping of its failure", async () => {
  const request = new AsyncLocalStorage<string>();
  await using runtime = new Runtime({ maxProcesses: 2 });
  const seen: (string | undefined)[] = [];
  await request.run("forker", () =>
    runtime.runApp(async (app) => {
      await app.scope(async (inner) => {
        // failFast: the failure aborts the scope's signal, whose listeners run
        // synchronously in the failure's bookkeeping.
        inner.signal.addEventListener("abort", () => void seen.push(request.getStore()));
        await inner.forkAll([1, 2, 3], (item: number) => {
          if (item !== 2) return item;
          request.enterWith("script");
          throw new Error("boom");
        }).catch(() => {});
      }, { failFast: true }).catch(() => {});
    }));
  assertEquals(seen, ["forker"]);
});
