// Bad input that procpool must survive: processes that throw values nobody
// can describe, durations setTimeout cannot hold, and waits that would wait
// for themselves (user clocks and loggers that break: bad_input_clock_test.ts).
// One row per case; each returns what went wrong (runner in _bad_input.ts).
import { NestedForkError, ProcessFailedError, Runtime } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";
import { type Behaviour, first, idle, is, quiet, runBehaviours, settled } from "./_bad_input.ts";

const rows: Behaviour[] = [];
const row = (label: string, run: Behaviour["run"]) => rows.push({ label, run });

const DAY = 24 * 60 * 60 * 1000;

// ---- durations above 2^31 - 1 ms on the system clock --------------------------
// setTimeout overflowed and fired after ~1 ms; chained timers wait for real.
for (const [label, ms] of [["30 days", 30 * DAY], ["2^53 ms", 2 ** 53]] as const) {
  row(`fork timeoutMs ${label} does not cut a 10 ms process short`, async () => {
    await using runtime = new Runtime({ maxProcesses: 1 });
    const value = await runtime.runApp(async (app) =>
      app.awaitResult(
        await app.forkProcess((lang) => lang.delay(10).then(() => "done"), { timeoutMs: ms }),
      )
    );
    return is("the result", value, "done");
  });
  row(`await timeoutMs ${label} waits for a 10 ms process`, async () => {
    await using runtime = new Runtime({ maxProcesses: 1 });
    const value = await runtime.runApp(async (app) =>
      app.awaitResult(await app.forkProcess((lang) => lang.delay(10).then(() => "done")), {
        timeoutMs: ms,
      })
    );
    return is("the result", value, "done");
  });
  row(`delay(${label}) is still pending after 20 ms`, async () => {
    await using runtime = new Runtime({ maxProcesses: 1 });
    return await runtime.runApp(async (app) => {
      const handle = await app.forkProcess((lang) => lang.delay(ms));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const status = handle.status;
      handle.cancel();
      return is("the status after 20 ms", status, "running");
    });
  });
}

// ---- values that cannot be described --------------------------------------------
const unprintable: [string, () => unknown][] = [
  ["a revoked Proxy", () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  }],
  ["an Error whose message getter throws", () => {
    const error = new Error();
    Object.defineProperty(error, "message", {
      get() {
        throw new Error("no message");
      },
    });
    return error;
  }],
];
for (const [label, make] of unprintable) {
  row(`a process that throws ${label}: failed, released, awaitable`, async () => {
    await using runtime = new Runtime({ maxProcesses: 1, logger: quiet });
    const thrown = make();
    return await runtime.runApp(async (app) => {
      const handle = await app.forkProcess(() => Promise.reject(thrown));
      const { error } = await settled(app.awaitResult(handle));
      return first(
        error instanceof ProcessFailedError ? undefined : `awaitResult rejected with ${error}`,
        is("the cause", error?.cause, thrown),
        is("the status", handle.status, "failed"),
        idle(runtime),
      );
    });
  });
  row(`a process that throws ${label}, unobserved: the app rejects`, async () => {
    await using runtime = new Runtime({ maxProcesses: 1, logger: quiet });
    const { error } = await settled(runtime.runApp(async (app) => {
      await app.forkProcess(() => Promise.reject(make()));
    }));
    return error instanceof ProcessFailedError ? idle(runtime) : `runApp rejected with ${error}`;
  });
}

// ---- waits that would wait for themselves -----------------------------------------
row("a process awaiting its runtime's disposal gets NestedForkError", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  const error = await runtime.runApp(async (app) =>
    app.awaitResult(
      await app.forkProcess(() => runtime[Symbol.asyncDispose]().then(() => "resolved", (e) => e)),
    )
  );
  return error instanceof NestedForkError && /never resolve/.test(error.message)
    ? undefined
    : `got ${error}`;
});
row("an evalLang script awaiting its runtime's disposal gets NestedForkError", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1 });
  const error = await runtime.runApp((app) =>
    app.evalLang(() => runtime[Symbol.asyncDispose]().then(() => "resolved", (e) => e))
  );
  return error instanceof NestedForkError ? undefined : `got ${error}`;
});
row("a process may dispose of a runtime that runs no app", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  const outcome = await runtime.runApp(async (app) =>
    app.awaitResult(
      await app.forkProcess(async () => {
        const own = new Runtime({ maxProcesses: 1 });
        return await own[Symbol.asyncDispose]().then(() => "disposed");
      }),
    )
  );
  return is("the outcome", outcome, "disposed");
});
row("a process awaiting its own handle's asyncDispose gets a TypeError", async () => {
  await using runtime = new Runtime({ maxProcesses: 1 });
  return await runtime.runApp(async (app) => {
    const own: { handle?: AsyncDisposable } = {};
    let go!: () => void;
    const started = new Promise<void>((resolve) => go = resolve);
    const handle = await app.forkProcess(async () => {
      await started;
      return await own.handle![Symbol.asyncDispose]().then(() => "resolved", (e) => e);
    });
    own.handle = handle;
    go();
    const error = await app.awaitResult(handle);
    return error instanceof TypeError && /its own handle/.test(error.message)
      ? undefined
      : `got ${error}`;
  });
});

Deno.test("bad input that procpool must survive: each row ends, releases and reports", async () => {
  await runBehaviours(rows);
});
