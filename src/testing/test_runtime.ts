/**
 * The test interpreter: the same runtime, on a virtual clock that advances by
 * itself, recording every LangL log call and operation.
 *
 * @module
 */
import type { AppL, ScopeOptions } from "../app/app.ts";
import type { LogEntry, TraceEvent } from "../runtime/observer.ts";
import {
  abandonApp,
  observerOption,
  Runtime,
  type RuntimeOptions,
  startApp,
} from "../facade/runtime.ts";
import { requireObject } from "../_validate.ts";
import { VirtualClock } from "./virtual_clock.ts";
import { TraceLog } from "./_trace_log.ts";
import { AutoAdvance } from "./_auto_advance.ts";
import { type StuckApp, stuckReport } from "./_stuck_report.ts";
import { StuckError } from "./stuck_error.ts";

/**
 * A runtime on a {@linkcode VirtualClock} that auto-advances: when nothing can
 * make progress except by waiting on the clock, the clock jumps to the
 * earliest sleeper. While an `evalIO` is pending the clock stands still. A
 * program that can make no progress at all makes `runApp` reject with
 * {@linkcode StuckError} after about a second of real time. With a fixed
 * `seed`, a program gives the same results, logs and trace on every run.
 *
 * @example
 * ```ts
 * import { createTestRuntime } from "@procpool/procpool/testing";
 * await using runtime = createTestRuntime({ maxProcesses: 2, seed: 7 });
 * const start = Date.now();
 * await runtime.runApp(async (app) => {
 *   await app.forkAll([1, 2, 3], (n, lang) => lang.delay(n * 3_600_000));
 * });
 * console.assert(runtime.clock.now() === 4 * 3_600_000 && Date.now() - start < 5_000);
 * ```
 */
export interface TestRuntime extends Runtime {
  /** The virtual clock the runtime runs on. */
  readonly clock: VirtualClock;
  /** Every LangL log call, in order. */
  readonly logs: readonly LogEntry[];
  /** Every LangL operation: process id, operation, virtual time. */
  readonly trace: readonly TraceEvent[];
}

/**
 * Options for {@linkcode createTestRuntime}: a runtime's, without `clock`
 * (the test runtime brings its own virtual one), plus its start time.
 *
 * @example
 * ```ts
 * import { createTestRuntime, type TestRuntimeOptions } from "@procpool/procpool/testing";
 * const options: TestRuntimeOptions = { maxProcesses: 4, seed: 42, start: 1_000 };
 * await using runtime = createTestRuntime(options);
 * console.assert(runtime.clock.now() === 1_000);
 * ```
 */
export type TestRuntimeOptions = Omit<RuntimeOptions, "clock"> & {
  /** The virtual clock's start time, in ms. Default 0. */
  start?: number;
};

/** Internal: how long a program must be quiet to be stuck, in real ms (tests shorten it). */
export const stuckAfterOption: unique symbol = Symbol("procpool.stuckAfterMs");

const STUCK_AFTER_MS = 1_000;

interface RunningApp extends StuckApp {
  stuck: StuckError | undefined;
  reject: (error: unknown) => void;
  ended: boolean;
}

class AutoAdvancingRuntime extends Runtime implements TestRuntime {
  readonly clock: VirtualClock;
  readonly #logs: LogEntry[];
  readonly #trace: TraceLog;
  readonly #apps = new Set<RunningApp>();
  readonly #loop: AutoAdvance;

  constructor(options: TestRuntimeOptions) {
    requireObject("createTestRuntime options", options);
    const clock = new VirtualClock(options.start ?? 0);
    const logs: LogEntry[] = [];
    const trace = new TraceLog();
    // The loop is created before super() returns, so the observer can reach it.
    const holder: { loop?: AutoAdvance } = {};
    super({
      ...options,
      clock,
      [observerOption]: {
        log: (entry: LogEntry) => logs.push(entry),
        trace: trace.record,
        holdClock: (held: boolean) => holder.loop!.hold(held),
        ioStarted: () => holder.loop!.ioStarted(),
        ioEnded: () => holder.loop!.ioEnded(),
      },
    } as RuntimeOptions);
    this.clock = clock;
    this.#logs = logs;
    this.#trace = trace;
    const stuckAfterMs = (options as { [stuckAfterOption]?: number })[stuckAfterOption] ??
      STUCK_AFTER_MS;
    this.#loop = holder.loop = new AutoAdvance(clock, {
      fingerprint: () => this.#fingerprint(),
      stuck: () => this.#stuck(stuckAfterMs),
      quiet: () => this.#giveUpStuckApps(),
    }, stuckAfterMs);
  }

  get logs(): readonly LogEntry[] {
    return this.#logs;
  }

  get trace(): readonly TraceEvent[] {
    return this.#trace.events;
  }

  override runApp<T>(body: (app: AppL) => Promise<T>, options?: ScopeOptions): Promise<T> {
    // Detached (`const { runApp } = runtime`): the base method says how to call it.
    if (!(this instanceof AutoAdvancingRuntime)) {
      return Runtime.prototype.runApp.call(this, body) as Promise<T>;
    }
    let started;
    const app = { bodyDone: false } as RunningApp;
    // Watches the body only to say, if the program gets stuck, whether it still runs.
    const watched = typeof body !== "function" ? body : (scopeApp: AppL) => {
      const done = () => app.bodyDone = true;
      try {
        const result = body(scopeApp);
        Promise.resolve(result).then(done, done);
        return result;
      } catch (error) {
        done();
        throw error;
      }
    };
    try {
      started = startApp(this, watched, options);
    } catch (error) {
      return Promise.reject(error);
    }
    const { scope, running } = started;
    return new Promise<T>((resolve, reject) => {
      Object.assign(app, { scope, stuck: undefined, reject, ended: false });
      this.#apps.add(app);
      this.#loop.appStarted();
      running.then(
        (value) => app.stuck === undefined ? resolve(value) : reject(app.stuck),
        (error) => reject(app.stuck ?? error),
      ).finally(() => this.#appEnded(app));
    });
  }

  #appEnded(app: RunningApp): void {
    if (app.ended) return;
    app.ended = true;
    this.#apps.delete(app);
    this.#loop.appEnded();
  }

  #fingerprint(): string {
    const { started, succeeded, failed, cancelled, active, waiting } = this.stats();
    return [
      this.#trace.length,
      this.#logs.length,
      started,
      succeeded,
      failed,
      cancelled,
      active,
      waiting,
      this.clock.now(),
      this.clock.pending,
    ].join();
  }

  /** Cancels every running app; each rejects with the error once nothing more can stop. */
  #stuck(stuckAfterMs: number): void {
    const error = new StuckError(stuckReport(this.#apps, this.stats()), stuckAfterMs);
    for (const app of this.#apps) {
      if (app.stuck !== undefined) continue;
      app.stuck = error;
      app.scope.cancel(error);
    }
  }

  /** A turn passed after the cancel: whatever could stop has stopped. */
  #giveUpStuckApps(): void {
    for (const app of [...this.#apps]) {
      if (app.stuck === undefined) continue;
      app.reject(app.stuck);
      abandonApp(this, app.scope);
      this.#appEnded(app);
    }
  }
}

/**
 * Creates a {@linkcode TestRuntime}.
 *
 * @example
 * ```ts
 * import { createTestRuntime } from "@procpool/procpool/testing";
 * await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
 * await runtime.runApp((app) => app.evalLang((lang) => lang.logInfo("hello")));
 * console.assert(runtime.logs[0].message === "hello" && runtime.trace[0].op === "logInfo");
 * ```
 */
export function createTestRuntime(options: TestRuntimeOptions): TestRuntime {
  return new AutoAdvancingRuntime(options);
}
