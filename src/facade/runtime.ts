/**
 * The runtime: owns the fixed capacity, the live count, the clock, the random
 * source and the logger, and runs applications.
 *
 * @module
 */
import { getLogger } from "@logtape/logtape";
import type { AppL, ScopeOptions } from "../app/app.ts";
import { isInsideScript, outsideScripts, refuseInsideScript } from "../app/_guard.ts";
import { checkScopeOptions } from "../app/_options.ts";
import { Scope } from "../app/scope.ts";
import { NestedForkError, RuntimeDisposedError } from "../errors.ts";
import { detachedCall, requireFunction } from "../_validate.ts";
import { checkRuntimeOptions } from "../runtime/_runtime_options.ts";
import { systemClock } from "../runtime/clock.ts";
import { RuntimeCore } from "../runtime/core.ts";
import type { RuntimeObserver } from "../runtime/observer.ts";
import { randomSeed } from "../runtime/random.ts";
import { checkRate } from "../runtime/_rate_window.ts";
import { otelHooks } from "../runtime/_otel.ts";
import { combineHooks } from "../runtime/_hooks.ts";
import { attachRecorder } from "../runtime/timeline.ts";
import { fifo } from "../runtime/wait_policy.ts";
import type { PoolStats, RuntimeOptions } from "../runtime/options.ts";

export type { PoolStats, RuntimeLogger, RuntimeOptions } from "../runtime/options.ts";

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
      options.shared,
      outsideScripts,
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
    if (core.shared !== undefined) stats.shared = core.shared.stats;
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
    this.#core.debug.refresh();
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
      // Workers stop after their processes have (or were stopped by force),
      // and leases go back once no process uses them.
      const core = this.#core;
      this.#disposal = Promise.all([...this.#apps.values()].map((app) => app.ended))
        .then(() => core.disposeWorkers())
        .finally(() => core.disposeShared(reason));
    }
    return this.#disposal;
  }
}
