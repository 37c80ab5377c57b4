/**
 * The test interpreter: the same runtime, on a virtual clock that advances by
 * itself, recording every LangL log call and operation.
 *
 * @module
 */
import { clearImmediate, setImmediate } from "node:timers";
import type { AppL, ScopeOptions } from "../app/app.ts";
import type { LogEntry, TraceEvent } from "../runtime/observer.ts";
import { observerOption, Runtime, type RuntimeOptions } from "../runtime/runtime.ts";
import { requireObject } from "../_validate.ts";
import { fireEarliest, VirtualClock } from "./virtual_clock.ts";
import { TraceLog } from "./_trace_log.ts";

/**
 * A runtime on a {@linkcode VirtualClock} that auto-advances: when nothing can
 * make progress except by waiting on the clock, the clock jumps to the
 * earliest sleeper. With a fixed `seed`, a program gives the same results,
 * logs and trace on every run.
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

class AutoAdvancingRuntime extends Runtime implements TestRuntime {
  readonly clock: VirtualClock;
  readonly #logs: LogEntry[];
  readonly #trace: TraceLog;
  #runningApps = 0;
  #tick: ReturnType<typeof setImmediate> | undefined = undefined;
  /** A worker script is running: virtual time waits for it. */
  #held = false;

  constructor(options: TestRuntimeOptions) {
    requireObject("createTestRuntime options", options);
    const clock = new VirtualClock(options.start ?? 0);
    const logs: LogEntry[] = [];
    const trace = new TraceLog();
    super({
      ...options,
      clock,
      [observerOption]: {
        log: (entry: LogEntry) => logs.push(entry),
        trace: trace.record,
        holdClock: (held: boolean) => this.#hold(held),
      },
    } as RuntimeOptions);
    this.clock = clock;
    this.#logs = logs;
    this.#trace = trace;
  }

  get logs(): readonly LogEntry[] {
    return this.#logs;
  }

  get trace(): readonly TraceEvent[] {
    return this.#trace.events;
  }

  override runApp<T>(body: (app: AppL) => Promise<T>, options?: ScopeOptions): Promise<T> {
    this.#runningApps++;
    this.#schedule();
    const result = super.runApp(body, options);
    const ended = () => {
      if (--this.#runningApps === 0 && this.#tick !== undefined) {
        clearImmediate(this.#tick);
        this.#tick = undefined;
      }
    };
    result.then(ended, ended);
    return result;
  }

  #hold(held: boolean): void {
    this.#held = held;
    // No ticks while held (they would spin); the release starts them again.
    if (!held && this.#runningApps > 0) this.#schedule();
  }

  #schedule(): void {
    this.#tick ??= setImmediate(this.#onTick);
  }

  // A macrotask turn has passed: every microtask (every runnable process and
  // body) has run. Whatever still waits on the clock can only be woken by time.
  readonly #onTick = (): void => {
    this.#tick = undefined;
    if (this.#runningApps === 0 || this.#held) return;
    fireEarliest(this.clock);
    this.#schedule();
  };
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
