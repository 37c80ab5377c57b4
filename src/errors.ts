/**
 * The named errors procpool reports. Each one says what happened and, where it
 * helps, what to do instead.
 *
 * @module
 */
import { show } from "./_validate.ts";

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
 * An application-layer operation (fork, await, scope, `runApp`, ...) was called
 * from inside a process or an `evalLang` script. Processes cannot fork: return
 * data to the application layer and fork from there.
 *
 * @example
 * ```ts
 * import { NestedForkError } from "@procpool/procpool";
 * console.assert(new NestedForkError("forkProcess").message.includes("forkProcess"));
 * ```
 */
export class NestedForkError extends Error {
  /** Creates the error for the AppL `operation` that was attempted; `message` replaces the default. */
  constructor(operation: string, message?: string) {
    super(
      message ??
        `${operation} was called from inside a process; LangL scripts cannot fork or use AppL. ` +
          "Return what you need to the application layer and fork from there.",
    );
    this.name = "NestedForkError";
  }
}

/**
 * An `AppL` was used after its scope ended, or after its scope was cancelled.
 *
 * @example
 * ```ts
 * import { ScopeClosedError } from "@procpool/procpool";
 * console.assert(new ScopeClosedError("the scope has ended").name === "ScopeClosedError");
 * ```
 */
export class ScopeClosedError extends Error {
  /** Creates the error; `options.cause` carries the cancellation reason, if any. */
  constructor(message = "the scope has ended", options?: ErrorOptions) {
    super(message, options);
    this.name = "ScopeClosedError";
  }
}

/**
 * `runApp` was called after the runtime was disposed.
 *
 * An app that is still running when the runtime is disposed does not get
 * this error from `runApp`: its scope is cancelled with a
 * `RuntimeDisposedError` as the reason. Its pending and later AppL calls
 * reject with {@linkcode ScopeClosedError} (whose `cause` is this error), its
 * processes end cancelled, and `runApp` settles as any cancelled scope does:
 * it resolves with the body's value if the body returns, and rejects with
 * what the body throws otherwise.
 *
 * @example
 * ```ts
 * import { Runtime, RuntimeDisposedError } from "@procpool/procpool";
 * const runtime = new Runtime({ maxProcesses: 1 });
 * await runtime[Symbol.asyncDispose]();
 * const error = await runtime.runApp(async () => {}).catch((e) => e);
 * console.assert(error instanceof RuntimeDisposedError);
 * ```
 */
export class RuntimeDisposedError extends Error {
  /** Creates the error. */
  constructor(message = "the runtime has been disposed; create a new Runtime") {
    super(message);
    this.name = "RuntimeDisposedError";
  }
}

/**
 * A process's lease on a shared capacity could not be renewed before the
 * runtime's local deadline (the store unreachable, or the lease reclaimed), so
 * the process was cancelled: the fleet-wide limit holds only if it stops. It
 * is a {@linkcode ProcessCancelledError}, not a failure.
 *
 * @example
 * ```ts
 * import { LeaseLostError, ProcessCancelledError } from "@procpool/procpool";
 * const error = new LeaseLostError("partner-api", 10_000);
 * console.assert(error instanceof ProcessCancelledError && error.key === "partner-api");
 * ```
 */
export class LeaseLostError extends ProcessCancelledError {
  /** The shared capacity's key. */
  readonly key: string;
  /** The lease time-to-live that passed without a renewal, in milliseconds. */
  readonly leaseMs: number;
  /** Creates the error for a lease on `key` not renewed within `leaseMs`. */
  constructor(key: string, leaseMs: number, message?: string) {
    super(
      message ??
        `the lease on shared capacity ${JSON.stringify(key)} could not be renewed within ` +
          `leaseMs ${leaseMs}; the process was cancelled so the fleet's limit holds`,
    );
    this.name = "LeaseLostError";
    this.key = key;
    this.leaseMs = leaseMs;
  }
}

/**
 * This runtime's `limit` for a shared capacity differs from the one the store
 * remembers for that key (set by a runtime that still holds or waits for a
 * lease). Give every runtime on one key the same limit.
 *
 * @example
 * ```ts
 * import { CapacityMismatchError } from "@procpool/procpool";
 * const error = new CapacityMismatchError("partner-api", 8, 50);
 * console.assert(error.limit === 8 && error.storedLimit === 50);
 * ```
 */
export class CapacityMismatchError extends Error {
  /** The shared capacity's key. */
  readonly key: string;
  /** This runtime's limit. */
  readonly limit: number;
  /** The limit the store holds for the key. */
  readonly storedLimit: number;
  /** Creates the error for `key`, where this runtime says `limit` and the store `storedLimit`. */
  constructor(key: string, limit: number, storedLimit: number) {
    super(
      `shared capacity ${JSON.stringify(key)} has limit ${limit} here but ${storedLimit} in the ` +
        "store, set by runtimes still using it; give every runtime on one key the same limit",
    );
    this.name = "CapacityMismatchError";
    this.key = key;
    this.limit = limit;
    this.storedLimit = storedLimit;
  }
}

/**
 * A wait for a shared variable's lock would have closed a cycle: the waiting
 * process holds a variable that the holder of the one it wants waits for,
 * directly or through other processes. The wait is refused at once with this
 * error, in the process whose wait closed the cycle; the others proceed.
 * `cycle` lists each process of the cycle with the variable it waits for,
 * starting with the refused wait.
 *
 * @example Two processes locking two variables in opposite orders
 * ```ts
 * import { DeadlockError, Runtime } from "@procpool/procpool";
 * await using runtime = new Runtime({ maxProcesses: 2 });
 * const outcomes = await runtime.runApp(async (app) => {
 *   const [a, b] = [app.newVar(0), app.newVar(0)];
 *   const transfer = (from: typeof a, to: typeof a) =>
 *     app.forkProcess((lang) =>
 *       lang.modifyVar(from, async (x) => {
 *         await lang.delay(10); // both now hold their first variable
 *         await lang.modifyVar(to, (y) => y + 1);
 *         return x - 1;
 *       })
 *     );
 *   const handles = [await transfer(a, b), await transfer(b, a)];
 *   return await Promise.allSettled(handles.map((h) => app.awaitResult(h)));
 * });
 * const refused = outcomes.find((o) => o.status === "rejected");
 * console.assert(refused?.reason.cause instanceof DeadlockError);
 * console.assert(outcomes.filter((o) => o.status === "fulfilled").length === 1);
 * ```
 */
export class DeadlockError extends Error {
  /** The cycle: each process (0 for an evalLang script) and the variable it waits for. */
  readonly cycle: readonly { readonly processId: number; readonly varId: number }[];
  /** Creates the error for `cycle`, starting with the refused wait. */
  constructor(
    message: string,
    cycle: readonly { readonly processId: number; readonly varId: number }[] = [],
  ) {
    super(message);
    this.name = "DeadlockError";
    this.cycle = cycle;
  }
}

function processLabel(processId: number, name: string | undefined): string {
  return name === undefined ? `process ${processId}` : `process ${processId} (${name})`;
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
