/**
 * procpool: a bounded process pool with structured concurrency, after Granin's
 * *Functional Design and Architecture* (§9.1.3–9.1.4).
 *
 * Three layers. **LangL** is what a domain script may do (delay, random
 * numbers, shared variables, logging, an IO escape hatch); it cannot fork.
 * **AppL** forks scripts as processes through the pool, awaits them and opens
 * scopes. The **Runtime** owns the fixed capacity and the live count.
 *
 * @example
 * ```ts
 * import { Runtime } from "@procpool/procpool";
 *
 * await using runtime = new Runtime({ maxProcesses: 4 });
 * const sizes = await runtime.runApp(async (app) => {
 *   const catalogue = app.newVar<number[]>([]);
 *   await app.forkAll([1, 2, 3, 4, 5, 6], async (_, lang) => {
 *     await lang.delay(1);
 *     const size = lang.getRandomInt(1, 100);
 *     await lang.modifyVar(catalogue, (all) => [...all, size]);
 *   });
 *   return await app.evalLang((lang) => lang.readVar(catalogue));
 * });
 * console.assert(sizes.length === 6);
 * ```
 *
 * @module
 */
export type {
  AppL,
  AwaitOptions,
  ForkOptions,
  ProcessHandle,
  ProcessOutcome,
  ProcessStatus,
  ScopeOptions,
  WorkerForkOptions,
} from "./src/app/app.ts";
export type { EvalIOOptions, LangL, Process, SharedVar, Transaction } from "./src/lang/lang.ts";
export type { Clock } from "./src/runtime/clock.ts";
export {
  type PoolStats,
  Runtime,
  type RuntimeLogger,
  type RuntimeOptions,
} from "./src/facade/runtime.ts";
export type { SharedCapacityStats } from "./src/runtime/options.ts";
export type { SharedCapacity } from "./src/runtime/shared/shared_capacity.ts";
export {
  type ChromeTrace,
  type ChromeTraceEvent,
  type TimelineOptions,
  TimelineRecorder,
} from "./src/runtime/timeline.ts";
export { backoff, type BackoffOptions, fifo, type WaitPolicy } from "./src/runtime/wait_policy.ts";
export {
  AwaitTimeoutError,
  CapacityMismatchError,
  DeadlockError,
  LeaseLostError,
  NestedForkError,
  ProcessCancelledError,
  ProcessFailedError,
  ProcessTimeoutError,
  RuntimeDisposedError,
  ScopeClosedError,
  WorkerCrashedError,
} from "./src/errors.ts";
