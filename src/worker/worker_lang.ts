// LangL inside a worker. Random numbers and the clock are answered here (the
// stream is the one the process would draw on the runtime's thread: same
// seed, same process id); everything that touches shared state or time
// passing (delay, variables, evalIO) is carried out by the runtime, through
// the process's own LangL object there, so locks, cancellation, virtual time,
// the trace and the logs behave exactly as for any process.
import {
  requireDuration,
  requireFunction,
  requireObject,
  requireSafeInteger,
  show,
} from "../_validate.ts";
import type { ProcessCancelledError } from "../errors.ts";
import type { LangL, SharedVar, Transaction } from "../lang/lang.ts";
import { BufferedTransaction } from "../lang/_transaction.ts";
import type { VarCell } from "../lang/shared_var.ts";
import { RandomStream } from "../runtime/random.ts";
import type { LogLevelName, RemoteOp } from "./protocol.ts";

/** What the worker's LangL needs from the run it belongs to. */
export interface RunChannel {
  now(): number;
  /** Records a local operation for the trace (only when the runtime keeps one). */
  traceLocal(op: string): void;
  /** Asks the runtime to carry out `op`; `onCall` answers the runtime's calls back. */
  request(
    op: RemoteOp,
    a?: unknown,
    b?: unknown,
    handlers?: RequestHandlers,
  ): Promise<unknown>;
  newVar<T>(initial: T): VarCell<T>;
  /** The worker-side variable, or a TypeError naming `argument`. */
  cellOf<T>(variable: SharedVar<T>, argument: string): VarCell<T>;
  log(level: LogLevelName, message: string, properties: Record<string, unknown> | undefined): void;
  /** Replaces worker-side variables by references, for sending. */
  encode(value: unknown): unknown;
}

/** Call-backs of one request: the runtime runs a function of the script. */
export interface RequestHandlers {
  /** modifyVar's function or atomically's body, on the values the runtime sends. */
  onCall?(value: unknown): Promise<unknown>;
  /** evalIO: `io` may start now; the promise settles when it has. */
  onIo?(): Promise<unknown>;
  /** evalIO: the signal given to `io` aborted. */
  onIoAbort?(reason: unknown): void;
  /** The request's outcome is local (modifyVar's new value, atomically's result, evalIO's). */
  local?(): Promise<unknown>;
  /** What `onCall` threw: the request then rejects with it rather than with its copy. */
  thrown?: { error: unknown };
}

/** The error the worker's LangL operations reject with once its process is cancelled. */
export let workerCancellationReason: (lang: WorkerLang) => ProcessCancelledError | undefined;

/** Cancels the worker's LangL (its signal aborts); false if it was already cancelled. */
export let cancelWorkerLang: (lang: WorkerLang, reason: ProcessCancelledError) => boolean;

export class WorkerLang implements LangL {
  // The process's cancellation: just its reason and signal, as the worker
  // keeps no hooks (what waits is the runtime's, which cancels there). The
  // controller is made when the script first asks for the signal: most
  // scripts never do, and it was a measurable part of a tiny run.
  #reason: ProcessCancelledError | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  readonly #run: RunChannel;
  readonly #seed: number;
  #stream: RandomStream | undefined = undefined;

  constructor(
    run: RunChannel,
    readonly processId: number,
    seed: number,
    /** The host process's lease token, sent with the run. */
    readonly fence: number | undefined,
  ) {
    this.#run = run;
    this.#seed = seed;
  }

  static {
    workerCancellationReason = (lang) => lang.#reason;
    cancelWorkerLang = (lang, reason) => {
      if (lang.#reason !== undefined) return false;
      lang.#reason = reason;
      lang.#controller?.abort(reason);
      return true;
    };
  }

  /** Aborted with the cancellation's reason once the process is cancelled. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  #throwIfCancelled(): void {
    if (this.#reason !== undefined) throw this.#reason;
  }

  delay(ms: number): Promise<void> {
    try {
      requireDuration("delay ms", ms);
      this.#throwIfCancelled();
      return this.#run.request("delay", ms) as Promise<void>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  getRandomInt(min: number, max: number): number {
    this.#run.traceLocal("getRandomInt");
    requireSafeInteger("getRandomInt min", min);
    requireSafeInteger("getRandomInt max", max);
    if (min > max) {
      throw new RangeError(`getRandomInt min (${min}) must not be greater than max (${max})`);
    }
    return this.#random().int(min, max);
  }

  random(): number {
    this.#run.traceLocal("random");
    return this.#random().next();
  }

  /** Made on the first draw: most worker scripts never draw. */
  #random(): RandomStream {
    return this.#stream ??= new RandomStream(this.#seed, this.processId);
  }

  now(): number {
    this.#run.traceLocal("now");
    return this.#run.now();
  }

  newVar<T>(initial: T): SharedVar<T> {
    return this.#run.newVar(initial);
  }

  readVar<T>(variable: SharedVar<T>): Promise<T> {
    try {
      const cell = this.#run.cellOf(variable, "readVar");
      this.#throwIfCancelled();
      return this.#run.request("readVar", cell.id) as Promise<T>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  writeVar<T>(variable: SharedVar<T>, value: T): Promise<void> {
    try {
      const cell = this.#run.cellOf(variable, "writeVar");
      this.#throwIfCancelled();
      return this.#run.request("writeVar", cell.id, this.#run.encode(value)) as Promise<void>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  modifyVar<T>(variable: SharedVar<T>, f: (value: T) => T | Promise<T>): Promise<T> {
    try {
      const cell = this.#run.cellOf(variable, "modifyVar");
      requireFunction("modifyVar f", f);
      this.#throwIfCancelled();
      let next: T;
      const handlers: RequestHandlers = {
        onCall: async (value) => {
          try {
            next = await f(value as T);
          } catch (error) {
            handlers.thrown = { error };
            throw error;
          }
          return this.#run.encode(next);
        },
        local: () => Promise.resolve(next),
      };
      return this.#run.request("modifyVar", cell.id, undefined, handlers) as Promise<T>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  atomically<R>(
    // deno-lint-ignore no-explicit-any
    vars: readonly SharedVar<any>[],
    body: (tx: Transaction) => R | Promise<R>,
  ): Promise<R> {
    try {
      if (!Array.isArray(vars)) {
        throw new TypeError(`atomically vars must be an array of SharedVar, got ${show(vars)}`);
      }
      requireFunction("atomically body", body);
      const cells = [
        ...new Set(vars.map((v, i) => this.#run.cellOf(v, `atomically vars[${i}]`))),
      ];
      this.#throwIfCancelled();
      let result: R;
      const handlers: RequestHandlers = {
        onCall: async (values) => {
          // The runtime holds the locks; the body sees the values it sent.
          const before = values as unknown[];
          cells.forEach((cell, i) => cell.value = before[i]);
          const tx = new BufferedTransaction(new Set(cells));
          try {
            result = await body(tx);
            tx.commit();
          } catch (error) {
            handlers.thrown = { error };
            throw error;
          } finally {
            tx.close();
          }
          const writes: [number, unknown][] = [];
          cells.forEach((cell, i) => {
            if (cell.value !== before[i]) writes.push([cell.id, this.#run.encode(cell.value)]);
          });
          return writes;
        },
        local: () => Promise.resolve(result),
      };
      return this.#run.request(
        "atomically",
        cells.map((cell) => cell.id),
        undefined,
        handlers,
      ) as Promise<R>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  logDebug(message: string, properties?: Record<string, unknown>): void {
    this.#log("debug", "logDebug", message, properties);
  }

  logInfo(message: string, properties?: Record<string, unknown>): void {
    this.#log("info", "logInfo", message, properties);
  }

  logWarning(message: string, properties?: Record<string, unknown>): void {
    this.#log("warning", "logWarning", message, properties);
  }

  logError(message: string, properties?: Record<string, unknown>): void {
    this.#log("error", "logError", message, properties);
  }

  evalIO<T>(io: (signal: AbortSignal) => Promise<T>, options?: unknown): Promise<T> {
    try {
      requireFunction("evalIO io", io);
      this.#throwIfCancelled();
      const controller = new AbortController();
      let outcome: Promise<T> | undefined;
      return this.#run.request("evalIO", options, undefined, {
        onIo: () => {
          try {
            outcome = Promise.resolve(io(controller.signal));
          } catch (error) {
            outcome = Promise.reject(error);
          }
          return outcome;
        },
        onIoAbort: (reason) => controller.abort(reason),
        local: () => outcome!,
      }) as Promise<T>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #log(
    level: LogLevelName,
    op: string,
    message: string,
    properties: Record<string, unknown> | undefined,
  ): void {
    if (typeof message !== "string") {
      throw new TypeError(`${op} message must be a string, got ${show(message)}`);
    }
    if (properties !== undefined) requireObject(`${op} properties`, properties);
    this.#run.log(level, message, properties);
  }
}
