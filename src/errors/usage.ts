// The errors for AppL and Runtime used where they cannot be: inside a
// process, after a scope ended, after the runtime was disposed.

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
