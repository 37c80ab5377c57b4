/**
 * The runtime: owns the fixed capacity, the live count, the clock, the random
 * source and the logger, and runs applications.
 *
 * @module
 */
import { getLogger } from "@logtape/logtape";
import type { AppL, ScopeOptions } from "../app/app.ts";
import { isInsideScript, refuseInsideScript } from "../app/_guard.ts";
import { checkScopeOptions } from "../app/_options.ts";
import { Scope } from "../app/scope.ts";
import { NestedForkError, RuntimeDisposedError } from "../errors.ts";
import { detachedCall, requireFunction } from "../_validate.ts";
import { checkRuntimeOptions } from "./_runtime_options.ts";
import { type Clock, systemClock } from "./clock.ts";
import { RuntimeCore } from "./core.ts";
import type { RuntimeObserver } from "./observer.ts";
import { randomSeed } from "./random.ts";
import { checkRate } from "./_rate_window.ts";
import { otelHooks } from "./_otel.ts";
import { combineHooks } from "./_hooks.ts";
import { attachRecorder, type TimelineRecorder } from "./timeline.ts";
import { fifo, type WaitPolicy } from "./wait_policy.ts";

/**
 * The logger a runtime writes to: the methods procpool calls on a LogTape
 * `Logger`. Any LogTape logger fits (`getLogger(["my-app"])`).
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import type { RuntimeLogger } from "@procpool/procpool";
 * const logger: RuntimeLogger = getLogger(["my-app", "pool"]);
 * ```
 */
export interface RuntimeLogger {
  /** Whether a record at `level` would reach any sink. */
  isEnabledFor(level: "debug" | "info" | "warning" | "error"): boolean;
  /** Logs at debug level. */
  debug(message: string, properties?: Record<string, unknown>): void;
  /** Logs at info level. */
  info(message: string, properties?: Record<string, unknown>): void;
  /** Logs at warning level. */
  warn(message: string, properties?: Record<string, unknown>): void;
  /** Logs at error level. */
  error(message: string, properties?: Record<string, unknown>): void;
}

/**
 * How to build a {@linkcode Runtime}.
 *
 * @example
 * ```ts
 * import { backoff, type RuntimeOptions } from "@procpool/procpool";
 * const options: RuntimeOptions = { maxProcesses: 8, wait: backoff(), seed: 1 };
 * ```
 *
 * @example At most 10 starts per second, on the virtual clock of a test runtime
 * ```ts
 * import { createTestRuntime } from "@procpool/procpool/testing";
 * await using runtime = createTestRuntime({
 *   maxProcesses: 100,
 *   rate: { limit: 10, intervalMs: 1_000 },
 * });
 * const items = Array.from({ length: 30 }, (_, i) => i);
 * const starts = await runtime.runApp((app) => app.forkAll(items, (_, lang) => lang.now()));
 * console.assert(starts[9] === 0 && starts[10] === 1_000 && starts[29] === 2_000);
 * ```
 */
export interface RuntimeOptions {
  /** The capacity: a positive safe integer, fixed for the runtime's life. */
  maxProcesses: number;
  /**
   * Also at most `limit` process starts in any window of `intervalMs` ms (a
   * sliding window on the runtime's clock, so virtual on a test runtime).
   * Forks wait for both a slot and the rate, in the order of the wait policy;
   * `tryForkProcess` returns `undefined` when either is missing. `limit` is a
   * positive integer, `intervalMs` a positive finite number. Default: no rate.
   */
  rate?: { limit: number; intervalMs: number };
  /** How forks wait when the pool is full. Default {@linkcode fifo}. */
  wait?: WaitPolicy;
  /** The clock for delays, timeouts and backoff sleeps. Default: the system clock. */
  clock?: Clock;
  /** Seeds the random source, making every process's numbers reproducible. Default: random. */
  seed?: number;
  /** A LogTape logger. Default `getLogger(["procpool"])`; the library never configures LogTape. */
  logger?: RuntimeLogger;
  /** Records a timeline of this runtime for Perfetto (see {@linkcode TimelineRecorder}). Default: none. */
  recorder?: TimelineRecorder;
  /**
   * Warm workers kept and reused for `forkWorker`, per isolation kind: a
   * positive integer, default `navigator.hardwareConcurrency`. A worker runs
   * one process at a time; a worker fork waits for a free worker first, then
   * for a slot like any fork.
   */
  workers?: number;
}

/**
 * A snapshot of the pool's counters, exact at the moment of the call.
 *
 * @example
 * ```ts
 * import { Runtime } from "@procpool/procpool";
 * await using runtime = new Runtime({ maxProcesses: 2 });
 * const { max, active, waiting } = runtime.stats();
 * console.assert(max === 2 && active === 0 && waiting === 0);
 * ```
 */
export interface PoolStats {
  /** The capacity. */
  max: number;
  /** Processes holding a slot now (never above `max`). */
  active: number;
  /** Forks waiting now, for a slot or for the start rate. */
  waiting: number;
  /**
   * Only on a runtime with a `rate`: of `waiting`, the forks a slot is free
   * for, held back by the rate alone.
   */
  waitingForRate?: number;
  /** Processes started so far. */
  started: number;
  /** Processes that returned. */
  succeeded: number;
  /** Processes that threw without being cancelled. */
  failed: number;
  /** Processes that stopped after their cancellation was requested. */
  cancelled: number;
}

/**
 * Internal, for the test runtime: runs an app as `runApp` does and also
 * returns its root scope.
 */
export let startApp: <T>(
  runtime: Runtime,
  body: (app: AppL) => Promise<T>,
  options: ScopeOptions | undefined,
) => { scope: Scope; running: Promise<T> };

/**
 * Internal: forgets a running app, so that disposal no longer waits for it
 * (the test runtime gives up on a stuck app whose processes cannot stop).
 */
export let abandonApp: (runtime: Runtime, scope: Scope) => void;

/** Internal extras for the test runtime; not part of the public options. */
export const observerOption: unique symbol = Symbol("procpool.observer");

/**
 * A bounded process pool. Its capacity is fixed at construction: a capacity
 * that could change would race with the processes already admitted.
 *
 * @example
 * ```ts
 * import { Runtime } from "@procpool/procpool";
 * await using runtime = new Runtime({ maxProcesses: 2 });
 * const sum = await runtime.runApp(async (app) => {
 *   const a = await app.forkProcess(() => 20);
 *   const b = await app.forkProcess(async (lang) => { await lang.delay(1); return 22; });
 *   return (await app.awaitResult(a)) + (await app.awaitResult(b));
 * });
 * console.assert(sum === 42);
 * ```
 */
export class Runtime implements AsyncDisposable {
  readonly #core: RuntimeCore;
  /** Running root scopes, each with a promise that settles (never rejects) when it ends. */
  readonly #apps = new Map<Scope, { ended: Promise<void>; end: () => void }>();
  #disposal: Promise<void> | undefined = undefined;

  static {
    startApp = (runtime, body, options) => runtime.#startApp(body, options);
    abandonApp = (runtime, scope) => {
      const app = runtime.#apps.get(scope);
      runtime.#apps.delete(scope);
      app?.end();
    };
  }

  /** Creates a runtime; throws TypeError or RangeError for bad options. */
  constructor(options: RuntimeOptions) {
    checkRuntimeOptions(options);
    const { maxProcesses, wait = fifo(), clock = systemClock, seed, logger, recorder, workers } =
      options;
    const rate = checkRate(options.rate);
    const observer = (options as { [observerOption]?: RuntimeObserver })[observerOption];
    this.#core = new RuntimeCore(
      maxProcesses,
      wait,
      clock,
      seed ?? randomSeed(),
      logger ?? getLogger(["procpool"]),
      observer,
      // Asked once per runtime: without a registered provider or a recorder,
      // no hooks at all.
      combineHooks(
        otelHooks(maxProcesses, () => clock.now()),
        recorder === undefined ? undefined : attachRecorder(recorder, clock, maxProcesses),
      ),
      rate,
    );
    if (workers !== undefined) this.#core.workerLimit = workers;
  }

  /** The capacity. There is no setter: it cannot change. */
  get maxProcesses(): number {
    return this.#core.slots.max;
  }

  /** The seed of the random source (the one given, or the one drawn). */
  get seed(): number {
    return this.#core.seed;
  }

  /** The runtime's core, or a TypeError saying how to call `method`. */
  static #coreOf(runtime: Runtime | undefined, method: string): RuntimeCore {
    if (typeof runtime !== "object" || runtime === null || !(#core in runtime)) {
      throw detachedCall("runtime", method);
    }
    return runtime.#core;
  }

  /** The pool's counters now. */
  stats(): PoolStats {
    const core = Runtime.#coreOf(this, "stats");
    const stats: PoolStats = {
      max: core.slots.max,
      active: core.slots.active,
      waiting: core.slots.waiting,
      started: core.started,
      succeeded: core.succeeded,
      failed: core.failed,
      cancelled: core.cancelled,
    };
    const waitingForRate = core.slots.waitingForRate;
    if (waitingForRate !== undefined) stats.waitingForRate = waitingForRate;
    return stats;
  }

  /**
   * Runs an application in a root scope: resolves with `body`'s result once
   * every process it forked has stopped, or rejects (see the README's
   * "Scopes and failures").
   */
  runApp<T>(body: (app: AppL) => Promise<T>, options?: ScopeOptions): Promise<T> {
    try {
      Runtime.#coreOf(this, "runApp");
      return this.#startApp(body, options).running;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #startApp<T>(
    body: (app: AppL) => Promise<T>,
    options: ScopeOptions | undefined,
  ): { scope: Scope; running: Promise<T> } {
    refuseInsideScript("runApp");
    if (this.#disposal !== undefined) throw new RuntimeDisposedError();
    requireFunction("runApp body", body);
    const scope = new Scope(this.#core, undefined, checkScopeOptions("runApp", options));
    // Registered before the body starts, so a disposal from its first
    // synchronous steps still reaches it.
    const { promise: ended, resolve: end } = Promise.withResolvers<void>();
    this.#apps.set(scope, { ended, end });
    const running = scope.run(body);
    const forget = () => abandonApp(this, scope);
    running.then(forget, forget);
    return { scope, running };
  }

  /**
   * Cancels every scope and process and resolves once all have stopped.
   * Later `runApp` calls reject with `RuntimeDisposedError`. Idempotent.
   */
  [Symbol.asyncDispose](): Promise<void> {
    try {
      Runtime.#coreOf(this, "[Symbol.asyncDispose]");
    } catch (error) {
      return Promise.reject(error);
    }
    // Disposal waits for every process: awaited by one of them, it never ends.
    if (this.#apps.size > 0 && isInsideScript()) {
      return Promise.reject(
        new NestedForkError(
          "runtime[Symbol.asyncDispose]",
          "runtime[Symbol.asyncDispose] was called from inside a process or an evalLang script " +
            "while the runtime's apps are running: it waits until every process has stopped, " +
            "the caller included, so it would never resolve. Return (or throw) to the " +
            "application layer and dispose of the runtime there.",
        ),
      );
    }
    if (this.#disposal === undefined) {
      const reason = new RuntimeDisposedError("the runtime was disposed while the app was running");
      for (const scope of this.#apps.keys()) scope.cancel(reason);
      // Workers stop after their processes have (or were stopped by force).
      this.#disposal = Promise.all([...this.#apps.values()].map((app) => app.ended)).then(() =>
        this.#core.disposeWorkers()
      );
    }
    return this.#disposal;
  }
}
