// The errors a process ends with, or an await on it gives up with.
import { show } from "../_validate.ts";
import { processLabel } from "./_process_label.ts";

/**
 * A process ended because its cancellation was requested (by `handle.cancel`,
 * a fork `signal`, its scope, or the runtime being disposed). `cause` holds
 * the reason given.
 *
 * @example Recognising a cancelled process
 * ```ts
 * import { ProcessCancelledError } from "@procpool/procpool";
 * const error = new ProcessCancelledError("process 3 was cancelled", { cause: "user" });
 * console.assert(error instanceof Error && error.name === "ProcessCancelledError");
 * ```
 */
export class ProcessCancelledError extends Error {
  /** Creates the error; pass the cancellation reason as `options.cause`. */
  constructor(message = "the process was cancelled", options?: ErrorOptions) {
    super(message, options);
    this.name = "ProcessCancelledError";
  }
}

/**
 * A process ran longer than the `timeoutMs` it was forked with and was
 * cancelled. It is a {@linkcode ProcessCancelledError}, so code that handles
 * cancellation handles timeouts too. `processId` names the process, and its
 * name (if it was forked with one) is in the message.
 *
 * @example
 * ```ts
 * import { ProcessCancelledError, ProcessTimeoutError } from "@procpool/procpool";
 * const error = new ProcessTimeoutError(3, 250, "fetch");
 * console.assert(error instanceof ProcessCancelledError && error.timeoutMs === 250);
 * console.assert(error.processId === 3 && error.message.includes("process 3 (fetch)"));
 * ```
 */
export class ProcessTimeoutError extends ProcessCancelledError {
  /** The id of the process that timed out. */
  readonly processId: number;
  /** The limit that was exceeded, in milliseconds. */
  readonly timeoutMs: number;
  /** Creates the error for process `processId` (named `name`, if any) that exceeded `timeoutMs`. */
  constructor(processId: number, timeoutMs: number, name?: string) {
    super(`${processLabel(processId, name)} did not finish within timeoutMs ${timeoutMs}`);
    this.name = "ProcessTimeoutError";
    this.processId = processId;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A process threw (without having been cancelled). `cause` holds the thrown
 * value and `processId` names the process.
 *
 * @example
 * ```ts
 * import { ProcessFailedError } from "@procpool/procpool";
 * const error = new ProcessFailedError(7, new Error("boom"));
 * console.assert(error.processId === 7 && (error.cause as Error).message === "boom");
 * ```
 */
export class ProcessFailedError extends Error {
  /** The id of the process that threw. */
  readonly processId: number;
  /** Creates the error for process `processId`, which threw `cause`. */
  constructor(processId: number, cause: unknown, name?: string) {
    super(`${processLabel(processId, name)} failed: ${describeCause(cause)}`, { cause });
    this.name = "ProcessFailedError";
    this.processId = processId;
  }
}

/**
 * `awaitResult` gave up waiting after its own `timeoutMs`. Only the wait
 * ended: the process keeps running and can be awaited again.
 *
 * @example
 * ```ts
 * import { AwaitTimeoutError } from "@procpool/procpool";
 * console.assert(new AwaitTimeoutError(5, 100).message.includes("100"));
 * ```
 */
export class AwaitTimeoutError extends Error {
  /** The id of the process that was awaited. */
  readonly processId: number;
  /** The wait's limit, in milliseconds. */
  readonly timeoutMs: number;
  /** Creates the error for a wait on `processId` that exceeded `timeoutMs`. */
  constructor(processId: number, timeoutMs: number) {
    super(
      `awaitResult gave up on process ${processId} after timeoutMs ${timeoutMs}; the process is still running`,
    );
    this.name = "AwaitTimeoutError";
    this.processId = processId;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A worker process's worker died outside the script: an uncaught error in a
 * timer or callback, the script closing its worker (`self.close()`), running
 * out of memory, or its OS process killed from outside. It is the `cause` of
 * the process's `ProcessFailedError`; procpool replaces the worker.
 *
 * @example
 * ```ts
 * import { WorkerCrashedError } from "@procpool/procpool";
 * const error = new WorkerCrashedError("the worker's OS process exited with signal SIGKILL");
 * console.assert(error.name === "WorkerCrashedError");
 * ```
 */
export class WorkerCrashedError extends Error {
  /** Creates the error; the message says how the worker died. */
  constructor(message = "the worker died outside the script", options?: ErrorOptions) {
    super(message, options);
    this.name = "WorkerCrashedError";
  }
}

/**
 * The thrown value in a few words. Total: a process may throw anything (a
 * revoked Proxy, an Error whose `message` getter throws), and the bookkeeping
 * that builds this message must not fail because of it.
 */
function describeCause(cause: unknown): string {
  try {
    if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
    return String(cause);
  } catch {
    return `a value that cannot be described (${show(cause)})`;
  }
}
