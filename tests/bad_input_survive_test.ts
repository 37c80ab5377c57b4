// Bad input that procpool must survive: user clocks and loggers that throw or
// return the wrong thing, processes that throw values nobody can describe,
// durations setTimeout cannot hold, and waits that would wait for themselves.
// One row per case; each returns what went wrong (runner in _bad_input.ts).
import {
  backoff,
  type Clock,
  NestedForkError,
  ProcessFailedError,
  Runtime,
  type RuntimeOptions,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";
import { type Behaviour, runBehaviours } from "./_bad_input.ts";

const rows: Behaviour[] = [];
const row = (label: string, run: Behaviour["run"]) => rows.push({ label, run });

const DAY = 24 * 60 * 60 * 1000;
const quiet = { isEnabledFor: () => false, debug() {}, info() {}, warn() {}, error() {} };
const realSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, Math.min(ms, 5));
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
/** A clock whose sleep works `good` times, then does `bad` instead. */
const clockThat = (bad: () => unknown, good = 0): Clock => ({
  now: () => Date.now(),
  sleep: (ms, signal) => good-- > 0 ? realSleep(ms, signal) : bad() as Promise<void>,
});
const untilAborted = (signal: AbortSignal) =>
  new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
const throwing = () => {
  throw new Error("the clock broke");
};
const noPromise = () => undefined;
const is = (what: string, actual: unknown, expected: unknown) =>
  Object.is(actual, expected) ? undefined : `${what} is ${String(actual)}, expected ${expected}`;
/** The first problem, or undefined. */
const first = (...problems: (string | undefined)[]) => problems.find((p) => p !== undefined);
const settled = (promise: Promise<unknown>) =>
  promise.then((value) => ({ value, error: undefined }), (error) => ({ value: undefined, error }));
const idle = (runtime: Runtime) => {
  const { active, waiting } = runtime.stats();
  return first(is("stats().active", active, 0), is("stats().waiting", waiting, 0));
};

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

// ---- user clocks and loggers that break during an admission ---------------------
const brokenSetups: [string, Partial<RuntimeOptions>, object][] = [
  ["a clock whose sleep throws", { clock: clockThat(throwing) }, { timeoutMs: 100 }],
  ["a clock whose sleep returns no promise", { clock: clockThat(noPromise) }, { timeoutMs: 100 }],
  ["a logger whose isEnabledFor throws", {
    logger: { ...quiet, isEnabledFor: throwing },
  }, {}],
  ["a logger whose debug throws", {
    logger: { ...quiet, isEnabledFor: () => true, debug: throwing },
  }, {}],
];
for (const [label, options, forkOptions] of brokenSetups) {
  const make = () => new Runtime({ maxProcesses: 1, logger: quiet, ...options });
  row(`forkProcess with ${label} rejects and holds nothing`, async () => {
    await using runtime = make();
    return await runtime.runApp(async (app) => {
      const { error } = await settled(app.forkProcess(() => 1, forkOptions));
      return first(
        error === undefined ? "it resolved" : undefined,
        idle(runtime),
        is("started", runtime.stats().started, 0),
      );
    });
  });
  row(`tryForkProcess with ${label} throws and holds nothing`, async () => {
    await using runtime = make();
    return await runtime.runApp((app) => {
      try {
        app.tryForkProcess(() => 1, forkOptions);
        return Promise.resolve("it returned");
      } catch {
        return Promise.resolve(idle(runtime));
      }
    });
  });
  row(`a queued fork with ${label} rejects when granted; the slot goes on`, async () => {
    await using runtime = make();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => open = resolve);
    return await runtime.runApp(async (app) => {
      // The holder is forked before the setup can fail: no fork options.
      const holder = await app.forkProcess(() => gate).catch(() => undefined);
      if (holder === undefined) return undefined; // this setup fails every fork
      const queued = settled(app.forkProcess(() => 1, forkOptions));
      const next = settled(app.forkProcess(() => "next"));
      open();
      const { error } = await queued;
      const { value } = await next;
      return first(
        error === undefined ? "the queued fork resolved" : undefined,
        value === undefined ? "the fork after it did not get the slot" : undefined,
      );
    });
  });
}
row("an awaitResult refused by a broken clock does not swallow the failure", async () => {
  await using runtime = new Runtime({ maxProcesses: 1, clock: clockThat(throwing), logger: quiet });
  let open!: () => void;
  const gate = new Promise<void>((resolve) => open = resolve);
  const { error } = await settled(runtime.runApp(async (app) => {
    const handle = await app.forkProcess(async () => {
      await gate;
      throw new Error("late");
    });
    await app.awaitResult(handle, { timeoutMs: 5 }).catch(() => {});
    open();
  }));
  return error instanceof ProcessFailedError ? idle(runtime) : `runApp settled with ${error}`;
});
for (const [label, good] of [["first", 0], ["second", 1]] as const) {
  row(`a backoff waiter whose ${label} sleep throws leaves the wait`, async () => {
    await using runtime = new Runtime({
      maxProcesses: 1,
      wait: backoff({ initialMs: 1, maxMs: 1 }),
      clock: clockThat(throwing, good),
      logger: quiet,
    });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => open = resolve);
    return await runtime.runApp(async (app) => {
      await app.forkProcess(() => gate);
      const { error } = await settled(app.forkProcess(() => 1));
      const waiting = runtime.stats().waiting;
      open();
      return first(error === undefined ? "it resolved" : undefined, is("waiting", waiting, 0));
    });
  });
}
row("a backoff waiter refused by its clock, then a cancelled scope: the app ends", async () => {
  await using runtime = new Runtime({
    maxProcesses: 1,
    wait: backoff(),
    clock: clockThat(throwing),
    logger: quiet,
  });
  const { error } = await settled(runtime.runApp(async (app) => {
    await app.scope(async (inner) => {
      await inner.forkProcess((lang) => lang.evalIO((signal) => untilAborted(signal)));
      await inner.forkProcess(() => 1).catch(() => {});
      throw new Error("the body gives up");
    });
  }));
  return is("the error", error?.message, "the body gives up");
});
row("a rate wait on a clock whose sleep throws rejects the fork", async () => {
  await using runtime = new Runtime({
    maxProcesses: 2,
    rate: { limit: 1, intervalMs: 1_000 },
    clock: clockThat(throwing),
    logger: quiet,
  } as RuntimeOptions);
  return await runtime.runApp(async (app) => {
    await app.forkProcess(() => 1);
    const { error } = await settled(app.forkProcess(() => 1));
    return first(error === undefined ? "it resolved" : undefined, idle(runtime));
  });
});

// ---- loggers --------------------------------------------------------------------
row("a logger whose error() throws does not replace the body's error", async () => {
  const logger = { ...quiet, error: throwing };
  await using runtime = new Runtime({ maxProcesses: 1, logger });
  const { error } = await settled(runtime.runApp(async (app) => {
    const handle = await app.forkProcess(() => Promise.reject(new Error("unobserved")));
    await handle[Symbol.asyncDispose]();
    throw new Error("the body's error");
  }));
  return is("runApp's error", error?.message, "the body's error");
});

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
