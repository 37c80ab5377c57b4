/**
 * LangL: what a domain script may do. Delay, random numbers, the clock,
 * shared variables, logging and an explicit IO escape hatch. There is no fork:
 * a script cannot create concurrency, only the application layer can.
 *
 * @module
 */

/**
 * A variable shared between processes. Create one with `app.newVar` or
 * `lang.newVar`; read and change it only through LangL, which serialises
 * every operation on it with a FIFO lock.
 *
 * @example
 * ```ts
 * import { Runtime } from "@procpool/procpool";
 * await using runtime = new Runtime({ maxProcesses: 2 });
 * const total = await runtime.runApp(async (app) => {
 *   const counter = app.newVar(0);
 *   await app.forkAll([1, 2, 3], (n, lang) => lang.modifyVar(counter, (c) => c + n));
 *   return await app.evalLang((lang) => lang.readVar(counter));
 * });
 * console.assert(total === 6);
 * ```
 */
export interface SharedVar<T> {
  /** Unique within its runtime; `atomically` locks variables in id order. */
  readonly id: number;
  /** Carries the type only; never set. */
  readonly __type?: T;
}

/**
 * The view `atomically`'s body gets of its variables. Writes are buffered and
 * applied only if the body returns.
 *
 * @example
 * ```ts
 * import { Runtime } from "@procpool/procpool";
 * await using runtime = new Runtime({ maxProcesses: 1 });
 * await runtime.runApp(async (app) => {
 *   const [a, b] = [app.newVar(10), app.newVar(0)];
 *   await app.evalLang((lang) =>
 *     lang.atomically([a, b], (tx) => {
 *       tx.write(a, tx.read(a) - 4);
 *       tx.write(b, tx.read(b) + 4);
 *     })
 *   );
 * });
 * ```
 */
export interface Transaction {
  /** The variable's value as this transaction sees it (its own writes included). */
  read<T>(variable: SharedVar<T>): T;
  /** Buffers a write; it takes effect only if the body returns. */
  write<T>(variable: SharedVar<T>, value: T): void;
}

/**
 * A domain script: a function of its LangL. Fork it with `app.forkProcess`,
 * or run it inline with `app.evalLang`.
 *
 * @example
 * ```ts
 * import type { Process } from "@procpool/procpool";
 * const rollDie: Process<number> = (lang) => lang.getRandomInt(1, 6);
 * ```
 */
export type Process<T> = (lang: LangL) => Promise<T> | T;

/**
 * The operations a process may use. Every asynchronous operation is a
 * cancellation point: once the process is cancelled it rejects with
 * `ProcessCancelledError` (a pending `delay` or lock wait at once), except
 * a shielded `evalIO`, which cleanup code uses to reach the outside world.
 * `random`, `getRandomInt`, `now` and the log operations never throw on
 * cancellation, so cleanup code can still log.
 *
 * @example
 * ```ts
 * import { Runtime, type LangL } from "@procpool/procpool";
 * async function observe(lang: LangL): Promise<number> {
 *   await lang.delay(1);
 *   const size = lang.getRandomInt(1, 100);
 *   lang.logInfo("saw a meteor of size {size}", { size });
 *   return size;
 * }
 * await using runtime = new Runtime({ maxProcesses: 4, seed: 42 });
 * const size = await runtime.runApp(async (app) => app.awaitResult(await app.forkProcess(observe)));
 * console.assert(size >= 1 && size <= 100);
 * ```
 */
export interface LangL {
  /** This process's id: 1, 2, 3, ... in fork order; 0 inside `evalLang`. */
  readonly processId: number;
  /** Aborts when the process is cancelled. Pass it on to IO you start. */
  readonly signal: AbortSignal;
  /**
   * The fencing token of this process's lease on the runtime's shared
   * capacity (`RuntimeOptions.shared`); `undefined` without one, and inside
   * `evalLang`. Tokens increase strictly per key across the fleet: pass it to
   * the resource you protect, which should refuse a token lower than one it
   * has already seen (a holder paused past its lease then changes nothing).
   */
  readonly fence: number | undefined;
  /** Waits `ms` milliseconds on the runtime's clock. */
  delay(ms: number): Promise<void>;
  /** A random integer in [min, max], both inclusive, from this process's stream. */
  getRandomInt(min: number, max: number): number;
  /** A random float in [0, 1) from this process's stream. */
  random(): number;
  /** The runtime clock's time, in milliseconds. */
  now(): number;
  /** Creates a shared variable. */
  newVar<T>(initial: T): SharedVar<T>;
  /**
   * Reads a variable (waiting for its lock if another process holds it). Every
   * lock wait that would close a cycle of waits between processes rejects at
   * once with `DeadlockError`; using a variable this process already holds is a
   * `TypeError`.
   */
  readVar<T>(variable: SharedVar<T>): Promise<T>;
  /** Writes a variable; a Promise or other thenable is refused (a value is data). */
  writeVar<T>(variable: SharedVar<T>, value: T): Promise<void>;
  /** Replaces a variable's value by `f(value)`, holding its lock across `f`; returns the new value. */
  modifyVar<T>(variable: SharedVar<T>, f: (value: T) => T | Promise<T>): Promise<T>;
  /**
   * Locks `vars` (in id order, so two transactions never deadlock), runs
   * `body` and applies its writes only if it returns. If it throws or the
   * process is cancelled, nothing is written. A body that waits for another
   * variable held by a process that waits for one of `vars` gets
   * `DeadlockError` (and, unless it catches it, rolls back).
   */
  atomically<R>(
    // deno-lint-ignore no-explicit-any
    vars: readonly SharedVar<any>[],
    body: (tx: Transaction) => R | Promise<R>,
  ): Promise<R>;
  /** Logs at debug level, with `processId` (and the process's name) added. */
  logDebug(message: string, properties?: Record<string, unknown>): void;
  /** Logs at info level, with `processId` (and the process's name) added. */
  logInfo(message: string, properties?: Record<string, unknown>): void;
  /** Logs at warning level, with `processId` (and the process's name) added. */
  logWarning(message: string, properties?: Record<string, unknown>): void;
  /** Logs at error level, with `processId` (and the process's name) added. */
  logError(message: string, properties?: Record<string, unknown>): void;
  /**
   * The escape hatch: runs real IO, passing it the process's signal. The
   * process (and its slot) waits until `io` settles, even when cancelled.
   * `options.timeoutMs` also aborts that signal after so many real
   * milliseconds; `options.shielded` runs `io` even after the process was
   * cancelled, for cleanup (see {@linkcode EvalIOOptions}). On a test runtime,
   * the virtual clock stands still while any evalIO is pending.
   */
  evalIO<T>(io: (signal: AbortSignal) => Promise<T>, options?: EvalIOOptions): Promise<T>;
}

/**
 * Options for `lang.evalIO`. Both bound real IO, so their time is real time,
 * also on a test runtime.
 *
 * A shielded evalIO is for cleanup after a cancellation (closing a lease, a
 * transaction, a temporary file): it runs even when the process was already
 * cancelled (every other asynchronous LangL operation then refuses), and its
 * `io` gets a signal of its own that aborts only at `timeoutMs` (default
 * 5 000 ms), never at the process's cancellation. Without `shielded`, `io`
 * gets a signal that aborts at the process's cancellation or at `timeoutMs`,
 * whichever comes first. Either way evalIO settles only when `io` does. A
 * timeout aborts with a `DOMException` named `"TimeoutError"`, like
 * `AbortSignal.timeout`.
 *
 * @example Releasing a lease after a cancellation
 * ```ts
 * import { Runtime } from "@procpool/procpool";
 * const released: string[] = [];
 * await using runtime = new Runtime({ maxProcesses: 1 });
 * await runtime.runApp(async (app) => {
 *   const handle = await app.forkProcess(async (lang) => {
 *     try {
 *       await lang.delay(60_000);
 *     } finally {
 *       // The process is cancelled by now; a shielded evalIO still runs.
 *       await lang.evalIO(async (signal) => {
 *         signal.throwIfAborted();
 *         released.push("lease-7");
 *       }, { shielded: true, timeoutMs: 1_000 });
 *     }
 *   });
 *   handle.cancel();
 *   await app.awaitResult(handle).catch(() => {});
 * });
 * console.assert(released.join() === "lease-7");
 * ```
 */
export interface EvalIOOptions {
  /** Run even after the process was cancelled; `io`'s signal ignores the cancellation. Default false. */
  shielded?: boolean;
  /**
   * Aborts `io`'s signal after this many real milliseconds (evalIO still waits
   * for `io` to settle). Default: none, or 5 000 when shielded. `Infinity`: none.
   */
  timeoutMs?: number;
}
