// The line between a forkAll item's script and procpool's bookkeeping
// (API.md rule 6), in the batch's lane as for a single fork
// (script_end_guard_test.ts): what the script returns is still the script's
// code (a promise's own `then`, or a thenable's, runs marked as the script),
// what it did to the async context stops at its end, and an instrument's code
// around it is neither the script's nor procpool's.
import { AsyncLocalStorage } from "node:async_hooks";
import {
  context,
  type ContextManager,
  ROOT_CONTEXT,
  trace,
  type TracerProvider,
} from "@opentelemetry/api";
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

/** A tracer provider whose spans do nothing; `onStart` runs at each span's start. */
function tracerProvider(onStart: () => void): TracerProvider {
  const span = {
    setAttribute: () => span,
    setAttributes: () => span,
    addEvent: () => span,
    setStatus: () => span,
    updateName: () => span,
    end() {},
    recordException() {},
    isRecording: () => true,
    spanContext: () => ({ traceId: "0", spanId: "0", traceFlags: 0 }),
  };
  return {
    getTracer: () => ({
      startSpan: () => {
        onStart();
        return span;
      },
      startActiveSpan: () => {
        throw new Error("unused");
      },
    }),
  } as unknown as TracerProvider;
}

Deno.test("an instrument's code around a forkAll item runs outside the lane", async (t) => {
  // The tracer's span start, the context manager's `with` and the thenable it
  // returns are application code: neither a script nor procpool's own code,
  // and nothing they schedule may inherit the lane. The item itself stays a
  // script. Five items on two slots: some start in their own job, some in a
  // lane's hand-off.
  let record: (where: string) => void = () => {};
  const manager: ContextManager = {
    active: () => ROOT_CONTEXT,
    with(_context, fn, thisArg, ...args) {
      const result = fn.call(thisArg, ...args);
      // Only a process's script call (four arguments), not a scope's body.
      if (args.length !== 4) return result;
      record("with");
      return {
        then(resolve: (value: unknown) => void, reject: (error: unknown) => void) {
          record("then");
          Promise.resolve(result).then(resolve, reject);
        },
      } as ReturnType<typeof fn>;
    },
    bind: (_context, target) => target,
    enable() {
      return this;
    },
    disable() {
      return this;
    },
  };
  for (const instrument of ["a tracer", "a context manager"] as const) {
    await t.step(instrument, async () => {
      if (instrument === "a tracer") {
        trace.setGlobalTracerProvider(tracerProvider(() => record("span")));
      } else {
        trace.setGlobalTracerProvider(tracerProvider(() => {}));
        context.setGlobalContextManager(manager);
      }
      const seen: string[] = [];
      try {
        await using runtime = new Runtime({ maxProcesses: 2 });
        await runtime.runApp(async (app) => {
          let busy = false;
          record = (where) => {
            // appLFrom forks a probe process, which starts a span of its own.
            if (busy) return;
            busy = true;
            seen.push(`${where}:${appLFrom(app)}`);
            busy = false;
            queueMicrotask(() => {
              busy = true;
              seen.push(`${where} later:${appLFrom(app)}`);
              busy = false;
            });
          };
          const items = await app.forkAll([1, 2, 3, 4, 5], async () => {
            const before = appLFrom(app);
            await null;
            return `${before}/${appLFrom(app)}`;
          });
          record = () => {};
          assertEquals(items, Array(5).fill("refused/refused"));
        });
      } finally {
        trace.disable();
        context.disable();
      }
      assertEquals(seen.length > 0, true);
      assertEquals(seen.filter((entry) => entry.endsWith("refused")), []);
    });
  }
});
