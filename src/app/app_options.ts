/**
 * The options AppL's operations take: for a fork, a worker fork, an await and
 * a nested scope.
 *
 * @module
 */
import type { ProcessFailedError } from "../errors.ts";

/**
 * Options for `forkProcess`, `tryForkProcess` and `forkAll`.
 *
 * @example
 * ```ts
 * import type { ForkOptions } from "@procpool/procpool";
 * const options: ForkOptions = { name: "observer", timeoutMs: 5_000 };
 * ```
 */
export interface ForkOptions {
  /** Withdraws a waiting fork (rejecting with `signal.reason`) and cancels the running process. */
  signal?: AbortSignal;
  /** Cancels the process with `ProcessTimeoutError` if it runs longer than this (from when it takes its slot). */
  timeoutMs?: number;
  /** A name for logs and errors (`forkAll` appends `[index]`). */
  name?: string;
  /**
   * An integer, default 0. Under `fifo()`, a freed slot goes to the waiting
   * fork with the highest priority, first come first served within one
   * priority; `backoff()` ignores it. For `forkAll`, every item has it.
   *
   * @example Urgent work overtakes the queue, not the running processes
   * ```ts
   * import { Runtime } from "@procpool/procpool";
   * await using runtime = new Runtime({ maxProcesses: 1 });
   * const order: string[] = [];
   * await runtime.runApp(async (app) => {
   *   const gate = Promise.withResolvers<void>();
   *   const running = await app.forkProcess(() => gate.promise);
   *   const forks = [
   *     app.forkProcess(() => void order.push("batch 1")),
   *     app.forkProcess(() => void order.push("batch 2")),
   *     app.forkProcess(() => void order.push("urgent"), { priority: 10 }),
   *   ];
   *   gate.resolve();
   *   await app.awaitResult(running);
   *   for (const fork of forks) await app.awaitResult(await fork);
   * });
   * console.assert(order.join() === "urgent,batch 1,batch 2");
   * ```
   */
  priority?: number;
}

/**
 * Options for `forkWorker`: a fork's, plus which export of the module to run,
 * how long a cancelled script may take to stop, and where it runs.
 *
 * @example
 * ```ts
 * import type { WorkerForkOptions } from "@procpool/procpool";
 * const options: WorkerForkOptions = { isolation: "process", graceMs: 200, timeoutMs: 5_000 };
 * ```
 */
export interface WorkerForkOptions extends ForkOptions {
  /** The module's export to run: `(input, lang) => T | Promise<T>`. Default `"default"`. */
  export?: string;
  /**
   * After a cancel, how long (real ms, on the system clock) the script may take
   * to stop before its worker is stopped by force. Default 1 000.
   */
  graceMs?: number;
  /**
   * `"thread"` (default): a Web Worker in this OS process. `"process"`: a Deno
   * child process of its own, the only kind a runaway synchronous loop cannot
   * outlive (it is killed with SIGKILL).
   */
  isolation?: "thread" | "process";
}

/**
 * Options for `awaitResult`. They bound only the wait, never the process.
 *
 * @example
 * ```ts
 * import type { AwaitOptions } from "@procpool/procpool";
 * const options: AwaitOptions = { timeoutMs: 100 };
 * ```
 */
export interface AwaitOptions {
  /** Gives up waiting (rejecting with `signal.reason`); the process runs on. */
  signal?: AbortSignal;
  /** Gives up waiting with `AwaitTimeoutError` after this many ms; the process runs on. */
  timeoutMs?: number;
}

/**
 * Options for `runApp` and `app.scope`.
 *
 * @example A long-lived scope that reports each failure as it happens
 * ```ts
 * import { Runtime } from "@procpool/procpool";
 * await using runtime = new Runtime({ maxProcesses: 2 });
 * const failed: number[] = [];
 * await runtime.runApp(async (app) => {
 *   for (let i = 0; i < 3; i++) {
 *     await app.forkProcess(() => {
 *       throw new Error("job failed");
 *     });
 *   }
 * }, { onFailure: (error) => failed.push(error.processId) });
 * console.assert(failed.join() === "1,2,3"); // and runApp resolved: every failure was observed
 * ```
 */
export interface ScopeOptions {
  /**
   * The first process failure cancels the rest of the scope, which rejects
   * with it. Default false.
   */
  failFast?: boolean;
  /**
   * Called once for each `ProcessFailedError` of this scope's own processes
   * (not its nested scopes'), as it happens, unless something delivers it
   * anyway: an `awaitResult` already waiting for it, the `forkAll`,
   * `forkAllSettled` or `forkStream` call it belongs to, or failFast's
   * rejection of the scope. A failure handed to it
   * counts as observed and the scope keeps no reference to it. If it throws
   * (or returns a promise that rejects), that is logged at error level and the
   * failure still counts as observed. It runs outside any process, so it may
   * fork (a retry) while the scope is open.
   */
  onFailure?: (error: ProcessFailedError) => void;
}
