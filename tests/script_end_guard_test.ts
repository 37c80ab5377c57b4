// What runs when a script ends is procpool's bookkeeping, never the script's
// code, and what the script hands back is the script's code, never
// procpool's: the nested-fork guard at the end of a process (API.md rule
// 6). One step per way found to cross that line.
import { AsyncLocalStorage } from "node:async_hooks";
import { trace, type TracerProvider } from "@opentelemetry/api";
import { assertEquals, assertRejects } from "@std/assert";
import { type AppL, type Clock, Runtime } from "../mod.ts";
import { appLFrom } from "./_applfrom.ts";

const request = new AsyncLocalStorage<string>();
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

Deno.test("a queued script's enterWith does not reach the bookkeeping after its end", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  const seen: (string | undefined)[] = [];
  await request.run("forker", () =>
    runtime.runApp(async (app) => {
      await app.scope(async (inner) => {
        const gate = Promise.withResolvers<void>();
        const held = await inner.forkProcess(() => gate.promise);
        const failing = inner.forkProcess(() => {
          request.enterWith("script");
          throw new Error("boom");
        });
        gate.resolve();
        await inner.awaitResult(held);
        await failing;
        await tick();
      }, { onFailure: () => void seen.push(`onFailure:${request.getStore()}`) });
    }));
  assertEquals(seen, ["onFailure:forker"]);
});

Deno.test("with a clock of the user's, a hand-off's failure runs user code outside any mark", async () => {
  // forkAll's timeoutMs sleep throws on this clock: its admission fails in
  // the hand-off, and the batch's failure closes the user's generator.
  const clock: Clock = {
    now: () => Date.now(),
    sleep(ms: number, signal?: AbortSignal) {
      if (ms === 777) throw new Error("clock refuses 777");
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(signal.reason);
        }, { once: true });
      });
    },
  };
  await using runtime = new Runtime({ maxProcesses: 1, clock });
  const seen: string[] = [];
  await runtime.runApp(async (app) => {
    const gate = Promise.withResolvers<void>();
    const gateA = Promise.withResolvers<void>();
    const held = await app.forkProcess(() => gate.promise);
    const a = app.forkProcess(async () => {
      await gateA.promise;
      return 1;
    });
    async function* source() {
      try {
        yield 1;
        yield 2;
      } finally {
        seen.push(`sync:${appLFrom(app)}`);
        await null;
        seen.push(`after await:${appLFrom(app)}`);
      }
    }
    const all = app.forkAll(source(), (x) => x, { timeoutMs: 777 }).catch((e) => e.message);
    await tick();
    gate.resolve();
    await app.awaitResult(held);
    await tick();
    gateA.resolve();
    await app.awaitResult(await a);
    assertEquals(await all, "clock refuses 777");
    await tick();
  });
  assertEquals(seen, ["sync:allowed", "after await:allowed"]);
});

Deno.test("an instrument's span for a queued fork starts outside any mark", async () => {
  let onStart: () => void = () => {};
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
  const provider = {
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
  trace.setGlobalTracerProvider(provider);
  try {
    await using runtime = new Runtime({ maxProcesses: 1 });
    const seen: string[] = [];
    await runtime.runApp(async (app) => {
      const gate = Promise.withResolvers<void>();
      const held = await app.forkProcess(() => gate.promise);
      const queued = app.forkProcess(() => 1);
      onStart = () => {
        seen.push(`sync:${appLFrom(app)}`);
        queueMicrotask(() => seen.push(`later:${appLFrom(app)}`));
      };
      gate.resolve();
      await app.awaitResult(held);
      await app.awaitResult(await queued);
      onStart = () => {};
    });
    assertEquals(seen, ["sync:allowed", "later:allowed"]);
  } finally {
    trace.disable();
  }
});

Deno.test("what a script returns is still the script's code", async (t) => {
  await t.step("a thenable's then, and a promise's own then", async () => {
    await using runtime = new Runtime({ maxProcesses: 4 });
    const seen: string[] = [];
    await runtime.runApp(async (app) => {
      app.tryForkProcess(() => {
        // deno-lint-ignore no-explicit-any
        const promise: any = Promise.resolve(1);
        promise.then = function (onFulfilled: unknown, onRejected: unknown) {
          seen.push(`then:${appLFrom(app)}`);
          // deno-lint-ignore no-explicit-any
          return Promise.prototype.then.call(this, onFulfilled as any, onRejected as any);
        };
        return promise;
      });
      app.tryForkProcess(
        (() => ({
          then(resolve: (value: number) => void) {
            seen.push(`thenable:${appLFrom(app)}`);
            resolve(2);
          },
        })) as unknown as () => Promise<number>,
      );
      await tick();
    });
    assertEquals(seen.filter((entry) => entry.endsWith("allowed")), []);
    assertEquals(seen.includes("thenable:refused"), true);
  });
  await t.step("an evalLang script's thenable", async () => {
    await using runtime = new Runtime({ maxProcesses: 2 });
    const seen: string[] = [];
    await runtime.runApp(async (app) => {
      await app.evalLang(
        (() => ({
          then(resolve: (value: number) => void) {
            seen.push(appLFrom(app));
            resolve(1);
          },
        })) as unknown as () => Promise<number>,
      );
    });
    assertEquals(seen, ["refused"]);
  });
});

Deno.test("a lane item's quiet stop does not pass the lane's mark to the next fork's timer", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  let fromListener: string | undefined;
  await runtime.runApp(async (app) => {
    const gate = Promise.withResolvers<void>();
    const all = app.forkAll([1], async () => {
      await gate.promise;
      return 1;
    });
    await new Promise((resolve) => setTimeout(resolve, 1));
    const third = app.forkProcess(async (lang) => {
      lang.signal.addEventListener("abort", () => fromListener = appLFrom(app));
      await lang.delay(60_000);
    }, { timeoutMs: 20 });
    gate.resolve();
    await all;
    await assertRejects(async () => app.awaitResult(await third));
  });
  assertEquals(fromListener, "allowed");
});

Deno.test("nothing of a returned promise runs unmarked", async (t) => {
  // Each shape calls back into AppL from a part procpool's waiting might touch.
  type Shape = (seen: string[], app: AppL, value: number) => unknown;
  const shapes: Record<string, Shape> = {
    "a constructor getter": (seen, app, value) =>
      Object.defineProperty(Promise.resolve(value), "constructor", {
        get: () => (seen.push(appLFrom(app)), Promise),
      }),
    "a then of its own": (seen, app, value) =>
      Object.assign(Promise.resolve(value), {
        then(this: Promise<number>, ...handlers: unknown[]) {
          seen.push(appLFrom(app));
          // deno-lint-ignore no-explicit-any
          return Promise.prototype.then.apply(this, handlers as any);
        },
      }),
    "a proxy": (seen, app, value) =>
      new Proxy(Promise.resolve(value), {
        get(target, key) {
          seen.push(appLFrom(app));
          const property = Reflect.get(target, key);
          return typeof property === "function" ? property.bind(target) : property;
        },
      }),
  };
  for (const [name, shape] of Object.entries(shapes)) {
    for (const path of ["forkProcess", "forkAll", "evalLang"] as const) {
      await t.step(`${path}, ${name}`, async () => {
        await using runtime = new Runtime({ maxProcesses: 4 });
        const seen: string[] = [];
        await runtime.runApp(async (app) => {
          const script = (value: number) => shape(seen, app, value) as Promise<number>;
          if (path === "forkProcess") {
            assertEquals(await app.awaitResult(await app.forkProcess(() => script(1))), 1);
          } else if (path === "forkAll") {
            // More items than slots: some start in a lane's hand-off.
            assertEquals(await app.forkAll([1, 2, 3, 4, 5, 6], script), [1, 2, 3, 4, 5, 6]);
          } else assertEquals(await app.evalLang(() => script(1)), 1);
          await tick();
        });
        // A then of its own is never called, as with `await`; the others are.
        assertEquals(seen.length > 0, name !== "a then of its own");
        assertEquals(seen.filter((from) => from === "allowed"), []);
      });
    }
  }
});

Deno.test("a result that throws when touched fails its process, as under await", async (t) => {
  const revoked = () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy as unknown as Promise<number>;
  };
  const throwingConstructor = () =>
    Object.defineProperty(Promise.resolve(1), "constructor", {
      get() {
        throw new TypeError("no constructor");
      },
    }) as Promise<number>;
  for (
    const [name, script] of [["a revoked proxy", revoked], [
      "a throwing constructor getter",
      throwingConstructor,
    ]] as const
  ) {
    const expected = await (async () => await script())().catch((error) => error.constructor);
    for (const path of ["forkProcess", "forkAll", "evalLang"] as const) {
      await t.step(`${path}, ${name}`, async () => {
        await using runtime = new Runtime({ maxProcesses: 2 });
        await runtime.runApp(async (app) => {
          const outcome = path === "forkProcess"
            ? app.awaitResult(await app.forkProcess(script))
            : path === "forkAll"
            // Item 3 starts in the lane's hand-off (2 slots); the others return.
            ? app.forkAll([1, 2, 3, 4], (item: number) => item === 3 ? script() : item)
            : app.evalLang(script);
          const error = await outcome.then(() => undefined, (error) => error);
          // forkProcess and forkAll wrap it (ProcessFailedError); the cause is what await threw.
          const cause = error?.cause ?? error;
          assertEquals(cause?.constructor, expected);
        });
      });
    }
  }
});
