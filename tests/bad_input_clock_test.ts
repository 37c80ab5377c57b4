// Bad input that procpool must survive: user clocks and loggers that throw or
// return the wrong thing, during an admission, a wait or a failure's report.
// One row per case; each returns what went wrong (runner in _bad_input.ts).
import { backoff, type Clock, ProcessFailedError, Runtime, type RuntimeOptions } from "../mod.ts";
import { type Behaviour, first, idle, is, quiet, runBehaviours, settled } from "./_bad_input.ts";

const rows: Behaviour[] = [];
const row = (label: string, run: Behaviour["run"]) => rows.push({ label, run });

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

Deno.test("user clocks and loggers that break: each row ends, releases and reports", async () => {
  await runBehaviours(rows);
});
