// A queued fork's script starts after a hand-off, in its forker's context,
// marked as LangL code, and the bookkeeping after it runs outside that mark:
// scripts and what they leave behind cannot use AppL, a fork's timeout armed
// in a hand-off is not taken for the releasing script's code, and a process
// still recognises itself.
import { AsyncLocalStorage } from "node:async_hooks";
import { assertEquals, assertRejects } from "@std/assert";
import { Runtime } from "../mod.ts";
import { appLFrom } from "./_applfrom.ts";

const request = new AsyncLocalStorage<string>();

/** A process that holds the runtime's one slot until `release` is called. */
function holder(): { script: () => Promise<void>; release: () => void } {
  const { promise, resolve } = Promise.withResolvers<void>();
  return { script: () => promise, release: resolve };
}

Deno.test("a queued fork's script is a script, before and after an await and after its stop", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  await runtime.runApp(async (app) => {
    const first = holder();
    const held = await app.forkProcess(first.script);
    const later: Promise<string>[] = [];
    const queued = ["a", "b", "c"].map((id) =>
      request.run(id, () =>
        app.forkProcess(async () => {
          const before = appLFrom(app);
          await Promise.resolve();
          later.push(new Promise((resolve) => setTimeout(() => resolve(appLFrom(app)), 1)));
          return `${id}:${before}/${appLFrom(app)}:${request.getStore()}`;
        }))
    );
    first.release();
    await app.awaitResult(held);
    const handles = await Promise.all(queued);
    const results = await Promise.all(handles.map((handle) => app.awaitResult(handle)));
    assertEquals(results, ["a:refused/refused:a", "b:refused/refused:b", "c:refused/refused:c"]);
    // The scripts have stopped; the timers they left fire afterwards.
    assertEquals(await Promise.all(later), ["refused", "refused", "refused"]);
    assertEquals(appLFrom(app), "allowed");
  });
});

Deno.test("a long line of queued forks: the same rules for each", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  await runtime.runApp(async (app) => {
    const first = holder();
    const held = await app.forkProcess(first.script);
    const later: Promise<string>[] = [];
    const queued = Array.from(
      { length: 100 },
      (_, i) =>
        request.run(`r${i}`, () =>
          app.forkProcess(async () => {
            const before = appLFrom(app);
            await Promise.resolve();
            if (i % 10 === 9) {
              later.push(new Promise((resolve) => setTimeout(() => resolve(appLFrom(app)), 1)));
            }
            return `${before}/${appLFrom(app)}:${request.getStore() === `r${i}`}`;
          })),
    );
    first.release();
    await app.awaitResult(held);
    const handles = await Promise.all(queued);
    const results = await Promise.all(handles.map((handle) => app.awaitResult(handle)));
    assertEquals(new Set(results), new Set(["refused/refused:true"]));
    assertEquals(new Set(await Promise.all(later)), new Set(["refused"]));
    assertEquals(later.length, 10);
    assertEquals(appLFrom(app), "allowed");
  });
});

Deno.test("a queued fork awaiting its own handle's disposal is refused, not stuck", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  await runtime.runApp(async (app) => {
    const first = holder();
    const held = await app.forkProcess(first.script);
    const own: { handle?: AsyncDisposable } = {};
    const queued = app.forkProcess(async (lang) => {
      await lang.delay(1);
      await assertRejects(() => own.handle![Symbol.asyncDispose](), TypeError, "wait for itself");
      return "refused";
    });
    first.release();
    await app.awaitResult(held);
    const handle = own.handle = await queued;
    assertEquals(await app.awaitResult(handle), "refused");
  });
});

Deno.test("a fork's timeout is not taken for the code of the process whose stop granted it", async () => {
  // The second process stops quietly and hands its slot to the third, whose
  // timeoutMs is armed in that hand-off. Its timer must not carry the
  // second's mark: the abort listener it reaches is application code.
  await using runtime = new Runtime({ maxProcesses: 1 });
  await runtime.runApp(async (app) => {
    const first = holder();
    const held = await app.forkProcess(first.script);
    const second = app.forkProcess(() => "quiet");
    let fromListener: string | undefined;
    const third = app.forkProcess(async (lang) => {
      lang.signal.addEventListener("abort", () => fromListener = appLFrom(app));
      await lang.delay(60_000);
    }, { timeoutMs: 20 });
    first.release();
    await app.awaitResult(held);
    assertEquals(await app.awaitResult(await second), "quiet");
    await assertRejects(async () => app.awaitResult(await third));
    assertEquals(fromListener, "allowed");
  });
});
