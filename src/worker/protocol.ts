// The messages a runtime and one of its workers exchange. Both sides send
// batches: every message queued during one synchronous stretch goes out in
// one post (one structured clone, one pipe write), stamped with the sender's
// clock reading where the worker needs it.
//
// Values cross by structured clone, except shared variables (which cross as
// references, { [VAR_REF]: id }) and thrown values (see ErrorData).

/** A thrown value, described so that it survives the crossing. */
export interface ErrorData {
  /** An Error: its name, message and stack survive (structured clone keeps only standard names). */
  readonly name?: string;
  readonly message?: string;
  readonly stack?: string;
  readonly cause?: ErrorData;
  /** Anything else that was thrown, if it could be cloned. */
  readonly value?: unknown;
  /** 1 for an Error, 0 for another value. */
  readonly error: 0 | 1;
}

/** The LangL operations a worker asks its runtime to carry out. */
export type RemoteOp =
  | "delay"
  | "readVar"
  | "writeVar"
  | "modifyVar"
  | "atomically"
  | "evalIO";

export type LogLevelName = "debug" | "info" | "warning" | "error";

/** Runtime to worker. */
export type ToWorker =
  /**
   * Start a process. What is usually the same for every run (no name, no
   * fence, the system clock, no trace, no idle reports) is left out then:
   * each property less is less to clone on both sides, for every run.
   */
  | {
    readonly t: "run";
    readonly pid: number;
    readonly name?: string;
    readonly seed: number;
    /** The fencing token of the process's lease on a shared capacity (LangL.fence). */
    readonly fence?: number;
    readonly module: string;
    readonly export: string;
    readonly input: unknown;
    /** "stamp": the worker reads the clock from the stamps; absent: from Date.now(). */
    readonly clock?: "stamp";
    /** Report local operations for the test runtime's trace. */
    readonly trace?: true;
    /** Say when nothing is left to run (the test runtime holds its clock until then). */
    readonly idle?: true;
  }
  /** A remote operation's outcome; `c` marks a rejection caused by cancellation. */
  | { readonly t: "ok"; readonly id: number; readonly v?: unknown }
  | { readonly t: "err"; readonly id: number; readonly e: ErrorData; readonly c: boolean }
  | { readonly t: "cancel"; readonly e: ErrorData }
  /** Run a modifyVar function (v: the value) or an atomically body (v: the values). */
  | { readonly t: "call"; readonly id: number; readonly v: unknown }
  /** An evalIO may start now / its signal aborted. */
  | { readonly t: "io"; readonly id: number }
  | { readonly t: "ioAbort"; readonly id: number; readonly e: ErrorData };

/** Worker to runtime. */
export type FromWorker =
  | {
    readonly t: "op";
    readonly id: number;
    readonly op: RemoteOp;
    readonly a?: unknown;
    readonly b?: unknown;
  }
  | { readonly t: "newVar"; readonly key: number; readonly v: unknown }
  | {
    readonly t: "log";
    readonly level: LogLevelName;
    readonly message: string;
    readonly properties: Record<string, unknown> | undefined;
  }
  /** The answer to a call: the new value (modifyVar) or the writes (atomically). */
  | { readonly t: "answer"; readonly id: number; readonly v?: unknown; readonly e?: ErrorData }
  | { readonly t: "ioEnd"; readonly id: number }
  /** Local operations (random, now) since the last batch, for the trace: op, time, op, time... */
  | { readonly t: "trace"; readonly ops: readonly (string | number)[] }
  | { readonly t: "done"; readonly v?: unknown; readonly e?: ErrorData }
  /** Nothing left to run until the runtime answers; `n`: batches received so far. */
  | { readonly t: "idle"; readonly n: number }
  /** The worker is going away on its own (the script called `self.close()`). */
  | { readonly t: "closing" };

export interface Batch<M> {
  /** The runtime clock's reading when the batch was sent (runtime to worker only). */
  readonly now: number;
  readonly m: readonly M[];
}

/** Where a variable reference sits in a cloned value. */
export const VAR_REF = "__procpoolSharedVar";

const MAX_CAUSE_DEPTH = 8;

/** Describes a thrown value for the crossing; never throws. */
export function encodeError(thrown: unknown, depth = 0): ErrorData {
  if (thrown instanceof Error) {
    let cause: ErrorData | undefined;
    try {
      if (thrown.cause !== undefined && depth < MAX_CAUSE_DEPTH) {
        cause = encodeError(thrown.cause, depth + 1);
      }
      return {
        error: 1,
        name: String(thrown.name),
        message: String(thrown.message),
        stack: typeof thrown.stack === "string" ? thrown.stack : undefined,
        cause,
      };
    } catch {
      return { error: 1, name: "Error", message: "(an error that could not be described)" };
    }
  }
  return { error: 0, value: thrown };
}

/** The same value for an ErrorData whose `value` could not be cloned. */
export function describeUncloneable(data: ErrorData): ErrorData {
  let text: string;
  try {
    text = String(data.value);
  } catch {
    text = "(an unprintable value)";
  }
  return { error: 1, name: "Error", message: `a value that could not be cloned: ${text}` };
}

/** An Error (or the thrown value) again, with its name, message, stack and cause. */
export function decodeError(data: ErrorData): unknown {
  if (data.error === 0) return data.value;
  const error = new Error(
    data.message,
    data.cause === undefined ? undefined : {
      cause: decodeError(data.cause),
    },
  );
  if (data.name !== undefined && data.name !== "Error") {
    Object.defineProperty(error, "name", {
      value: data.name,
      writable: true,
      configurable: true,
      enumerable: false,
    });
  }
  if (data.stack !== undefined) {
    Object.defineProperty(error, "stack", {
      value: data.stack,
      writable: true,
      configurable: true,
      enumerable: false,
    });
  }
  return error;
}

/** The id in a variable reference, or undefined if `value` is not one. */
export function varRefId(value: object): number | undefined {
  if (Object.getPrototypeOf(value) !== Object.prototype) return undefined;
  const id = (value as Record<string, unknown>)[VAR_REF];
  return typeof id === "number" ? id : undefined;
}
