// The runtime's options and counters, as types: the services below the facade
// (core, slot pool, logging) and the facade itself (src/facade/runtime.ts)
// both read them, so they live here, under both.
import type { Clock } from "./clock.ts";
import type { SharedCapacity } from "./shared/shared_capacity.ts";
import type { TimelineRecorder } from "./timeline.ts";
import type { WaitPolicy } from "./wait_policy.ts";

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
   * With `shared`, the rate comes last: a fork holds its slot and its lease
   * while it waits for the window, so lease waits never bunch starts.
   */
  rate?: { limit: number; intervalMs: number };
  /** How forks wait when the pool is full. Default `fifo()`. */
  wait?: WaitPolicy;
  /** The clock for delays, timeouts and backoff sleeps. Default: the system clock. */
  clock?: Clock;
  /** Seeds the random source, making every process's numbers reproducible. Default: random. */
  seed?: number;
  /** A LogTape logger. Default `getLogger(["procpool"])`; the library never configures LogTape. */
  logger?: RuntimeLogger;
  /** Records a timeline of this runtime for Perfetto (see `TimelineRecorder`). Default: none. */
  recorder?: TimelineRecorder;
  /**
   * Warm workers kept and reused for `forkWorker`, per isolation kind: a
   * positive integer, default `navigator.hardwareConcurrency`. A worker runs
   * one process at a time; a worker fork waits for a free worker first, then
   * for a slot like any fork.
   */
  workers?: number;
  /**
   * A second bound, held across every runtime that uses the same store and
   * key (made by `redisCapacity` from `@procpool/procpool/redis`). A process
   * then starts only with a local slot and a lease on the shared capacity;
   * see the README's "Sharing a capacity across processes and machines".
   * Default: none, and the pool stays purely local.
   */
  shared?: SharedCapacity;
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
  /**
   * Processes running now (never above `max`). With a shared capacity, a
   * fork that holds its local slot but still waits for a lease is not
   * counted here but in `waiting`.
   */
  active: number;
  /** Forks waiting now: for a slot, for the start rate, or for a lease on the shared capacity. */
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
  /** Only on a runtime with a shared capacity: its key, its limit and the leases this runtime holds. */
  shared?: SharedCapacityStats;
}

/**
 * The shared capacity as one runtime sees it (`PoolStats.shared`).
 *
 * @example
 * ```ts
 * import type { SharedCapacityStats } from "@procpool/procpool";
 * const seen: SharedCapacityStats = { key: "partner-api", limit: 50, held: 3 };
 * console.assert(seen.held <= seen.limit);
 * ```
 */
export interface SharedCapacityStats {
  /** The capacity's key. */
  key: string;
  /** The fleet-wide limit. */
  limit: number;
  /**
   * Leases this runtime believes it holds now, busy or kept idle for a
   * moment: at least `active`, at most `maxProcesses`.
   */
  held: number;
}
