// forkAll over an async iterable that has not yielded yet (issue 10, item 1):
// the pending next() never holds the call open. A failure, the call's
// signal, a throwing body, a failFast trip and the runtime's disposal all
// settle it at once; the source is closed with return(), and whatever its
// pending next() or return() does later is handled, never an unhandled
// rejection.
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { ProcessFailedError, Runtime, RuntimeDisposedError, ScopeClosedError } from "../mod.ts";

/**
 * An async source that yields `items`, then waits in next() until `release`
 * is called (which rejects that next() with `late`). Counts return() calls;
 * its return() rejects, to prove the rejection is handled.
 */
function stalledSource<I>(items: I[]) {
  let index = 0;
  let pending = 0;
  let releaseNext: (() => void) | undefined;
  const state = {
    returned: 0,
    /** next() calls that have not settled. */
    get pending(): number {
      return pending;
    },
    /** Settles the stalled next() (with a rejection nobody may leave unhandled). */
    release(): void {
      releaseNext?.();
    },
    source: {
      [Symbol.asyncIterator]: () => ({
        next: (): Promise<IteratorResult<I>> => {
          if (index < items.length) return Promise.resolve({ done: false, value: items[index++] });
          pending++;
          return new Promise((_, reject) => {
            releaseNext = () => {
              pending--;
              reject(new Error("late failure of next()"));
            };
          });
        },
        return: (): Promise<IteratorResult<I>> => {
          state.returned++;
          return Promise.reject(new Error("return() failed"));
        },
      }),
    } as AsyncIterable<I>,
  };
  return state;
}

Deno.test("forkAll waiting on its source settles without it", async (t) => {
  await t.step("a failing item rejects the call while next() is pending", async () => {
    await using runtime = new Runtime({ maxProcesses: 2 });
    const src = stalledSource([1, 2]);
    const boom = new Error("item 2 failed");
    const error = await assertRejects(
      () =>
        runtime.runApp((app) =>
          app.forkAll(src.source, async (n) => {
            await Promise.resolve();
            if (n === 2) throw boom;
            return n;
          })
        ),
      ProcessFailedError,
    );
    assertStrictEquals(error.cause, boom);
    assertEquals(src.pending, 1);
    assertEquals(src.returned, 1);
    src.release();
    await Promise.resolve();
  });

  await t.step("the call's signal rejects it while the source has not yielded", async () => {
    await using runtime = new Runtime({ maxProcesses: 2 });
    const src = stalledSource<number>([]);
    const controller = new AbortController();
    const reason = new Error("enough");
    const error = await assertRejects(() =>
      runtime.runApp((app) => {
        const all = app.forkAll(src.source, (n) => n, { signal: controller.signal });
        queueMicrotask(() => controller.abort(reason));
        return all;
      })
    );
    assertStrictEquals(error, reason);
    assertEquals(src.returned, 1);
    src.release();
  });

  await t.step("a body that throws ends the scope", async () => {
    await using runtime = new Runtime({ maxProcesses: 2 });
    const src = stalledSource([1]);
    const bodyError = new Error("the body gave up");
    let forkAllError: unknown;
    const error = await assertRejects(() =>
      runtime.runApp(async (app) => {
        app.forkAll(src.source, (n) => n).catch((e) => forkAllError = e);
        await Promise.resolve();
        throw bodyError;
      })
    );
    assertStrictEquals(error, bodyError);
    assert(forkAllError instanceof ScopeClosedError);
    assertEquals(src.returned, 1);
    src.release();
  });

  await t.step("a failFast trip ends the scope", async () => {
    await using runtime = new Runtime({ maxProcesses: 2 });
    const src = stalledSource<number>([]);
    const boom = new Error("a sibling failed");
    const error = await assertRejects(() =>
      runtime.runApp(async (app) => {
        const all = app.forkAll(src.source, (n) => n);
        await app.forkProcess(async () => {
          await Promise.resolve();
          throw boom;
        });
        return await all;
      }, { failFast: true }), ProcessFailedError);
    assertStrictEquals(error.cause, boom);
    assertEquals(src.returned, 1);
    src.release();
  });

  await t.step("disposing the runtime resolves and ends the app", async () => {
    const runtime = new Runtime({ maxProcesses: 2 });
    const src = stalledSource([1]);
    const app = runtime.runApp((app) => app.forkAll(src.source, (n) => n));
    await Promise.resolve();
    await runtime[Symbol.asyncDispose]();
    const error = await assertRejects(() => app, ScopeClosedError);
    assert(error.cause instanceof RuntimeDisposedError);
    assertEquals(src.returned, 1);
    src.release();
  });

  await t.step("a next() settling after the call ended is dropped", async () => {
    await using runtime = new Runtime({ maxProcesses: 1 });
    let release: ((step: IteratorResult<number>) => void) | undefined;
    let calls = 0;
    const source: AsyncIterable<number> = {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          calls++;
          return new Promise<IteratorResult<number>>((resolve) => release = resolve);
        },
      }),
    };
    const controller = new AbortController();
    await assertRejects(() =>
      runtime.runApp((app) => {
        const all = app.forkAll(source, (n) => n, { signal: controller.signal });
        queueMicrotask(() => controller.abort(new Error("stop")));
        return all;
      })
    );
    release!({ done: false, value: 1 });
    await new Promise((resolve) => setTimeout(resolve, 0));
    assertEquals(calls, 1);
    assertEquals(runtime.stats().started, 0);
  });
});
