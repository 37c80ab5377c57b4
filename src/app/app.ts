/**
 * AppL: what the application layer may do. Create shared state, fork LangL
 * scripts as processes through the pool, await them, run LangL inline and
 * open nested scopes.
 *
 * @module
 */
import type { LangL, Process, SharedVar } from "../lang/lang.ts";
import type { ProcessFailedError } from "../errors.ts";
import type { AwaitOptions, ForkOptions, ScopeOptions, WorkerForkOptions } from "./app_options.ts";

export type { AwaitOptions, ForkOptions, ScopeOptions, WorkerForkOptions };

/**
 * Where a process is: `running` until it has stopped, then final.
 *
 * @example
 * ```ts
 * import type { ProcessStatus } from "@procpool/procpool";
 * const done: ProcessStatus[] = ["succeeded", "failed", "cancelled"];
 * ```
 */
export type ProcessStatus = "running" | "succeeded" | "failed" | "cancelled";

/**
 * How one item of `forkAllSettled` (or one process) ended: its value, its
 * failure, why it was cancelled (the cancel reason, such as the signal's;
 * a `ProcessTimeoutError` for a fork timeout), or `skipped` when the item
 * never started because the call's `signal` aborted first. Items are named
 * `${name}[${index}]` when the call has a `name`.
 *
 * @example
 * ```ts
 * import type { ProcessOutcome } from "@procpool/procpool";
 * function describe(outcome: ProcessOutcome<number>): string {
 *   switch (outcome.status) {
 *     case "succeeded": return `process ${outcome.id}: ${outcome.value}`;
 *     case "failed": return `process ${outcome.id} failed: ${outcome.error.message}`;
 *     case "cancelled": return `process ${outcome.id} was cancelled`;
 *     case "skipped": return "never started";
 *   }
 * }
 * console.assert(describe({ status: "succeeded", value: 4, id: 1 }) === "process 1: 4");
 * ```
 */
export type ProcessOutcome<T> =
  | { status: "succeeded"; value: T; id: number; name?: string }
  | { status: "failed"; error: ProcessFailedError; id: number; name?: string }
  | { status: "cancelled"; reason: unknown; id: number; name?: string }
  | { status: "skipped"; reason: unknown };

/**
 * The token of a forked process. Join it with `app.awaitResult`. `using`
 * requests cancellation at block exit; `await using` also waits until the
 * process has stopped and its slot is free.
 *
 * @example
 * ```ts
 * import { Runtime } from "@procpool/procpool";
 * await using runtime = new Runtime({ maxProcesses: 2 });
 * await runtime.runApp(async (app) => {
 *   await using handle = await app.forkProcess((lang) => lang.delay(10_000));
 *   console.assert(handle.status === "running");
 * }); // the block exit cancelled it and waited for it to stop
 * ```
 */
export interface ProcessHandle<T> extends Disposable, AsyncDisposable {
  /** The process id: 1, 2, 3, ... per runtime, in fork order. */
  readonly id: number;
  /** The name given at fork, if any. */
  readonly name: string | undefined;
  /** `running` until the process has stopped. */
  readonly status: ProcessStatus;
  /** Requests cancellation; the process keeps its slot until it stops. */
  cancel(reason?: unknown): void;
  /** Carries the result type only; never set. */
  readonly __result?: T;
}

/**
 * The application layer's operations. An `AppL` belongs to one scope: it is
 * closed when the scope ends, and it cannot be used from inside a process.
 *
 * @example
 * ```ts
 * import { Runtime } from "@procpool/procpool";
 * await using runtime = new Runtime({ maxProcesses: 3 });
 * const squares = await runtime.runApp((app) => app.forkAll([1, 2, 3], (n) => n * n));
 * console.assert(squares.join() === "1,4,9");
 * ```
 */
export interface AppL {
  /** Aborted when this scope is cancelled. */
  readonly signal: AbortSignal;
  /** Forks `process`, waiting for a slot if the pool is full. */
  forkProcess<T>(process: Process<T>, options?: ForkOptions): Promise<ProcessHandle<T>>;
  /** Forks `process` if a slot is free now; otherwise returns `undefined`. */
  tryForkProcess<T>(process: Process<T>, options?: ForkOptions): ProcessHandle<T> | undefined;
  /** Waits for a process and returns its value, or rejects with why it did not succeed. */
  awaitResult<T>(handle: ProcessHandle<T>, options?: AwaitOptions): Promise<T>;
  /**
   * Runs `process` on every item through the pool and returns the results in
   * input order. Like `Promise.all`: the first failure cancels the others.
   */
  forkAll<I, T>(
    items: Iterable<I> | AsyncIterable<I>,
    process: (item: I, lang: LangL) => Promise<T> | T,
    options?: ForkOptions,
  ): Promise<T[]>;
  /**
   * Forks a worker process: the module's export (`options.export`, default
   * `"default"`) runs as `fn(input, lang)` in a worker, with a LangL of its
   * own, taking a slot like any process. `input` and the result cross by
   * structured clone; shared variables inside `input` cross as references.
   */
  forkWorker<I, T>(
    module: URL | string,
    input: I,
    options?: WorkerForkOptions,
  ): Promise<ProcessHandle<T>>;
  /**
   * Like `forkAll`, but every item's outcome comes back, in input order, as
   * `Promise.allSettled` would give it, with each process's id and name: it
   * never rejects because of an item (their failures count as observed).
   * `options.signal` aborting cancels the items in flight (`cancelled`) and
   * skips the rest (`skipped`: for an array every element not yet started,
   * for another source only the item it had pulled), and the call still
   * resolves. Its scope's cancellation rejects it with `ScopeClosedError`;
   * a source that throws rejects it with that error.
   *
   * @example
   * ```ts
   * import { Runtime } from "@procpool/procpool";
   * await using runtime = new Runtime({ maxProcesses: 2 });
   * const outcomes = await runtime.runApp((app) =>
   *   app.forkAllSettled([1, 0, 3], (n) => {
   *     if (n === 0) throw new Error("no zero");
   *     return 12 / n;
   *   }, { name: "divide" })
   * );
   * console.assert(outcomes.map((o) => o.status).join() === "succeeded,failed,succeeded");
   * const [first, second] = outcomes;
   * console.assert(first.status === "succeeded" && first.value === 12 && first.name === "divide[0]");
   * console.assert(second.status === "failed" && second.error.message.includes("no zero"));
   * ```
   */
  forkAllSettled<I, T>(
    items: Iterable<I> | AsyncIterable<I>,
    process: (item: I, lang: LangL) => Promise<T> | T,
    options?: ForkOptions,
  ): Promise<ProcessOutcome<T>[]>;
  /**
   * The results of `process` over `items`, in input order, as the loop reads
   * them (the `pooledMap` of procpool). Items are pulled only as slots free
   * up and results are taken: never more than `maxProcesses` items ahead of
   * the reader, so memory stays bounded for any input size. A failure is
   * forkAll's: it cancels the items in flight, and the next read rejects
   * with it once they have stopped. Leaving the loop early (`break`,
   * `return()`) cancels the items in flight and waits for them. Throws at
   * once, like any synchronous AppL call, for bad input or a closed scope;
   * a stream its scope's body did not finish reading is closed when the
   * body ends.
   *
   * @example
   * ```ts
   * import { Runtime } from "@procpool/procpool";
   * await using runtime = new Runtime({ maxProcesses: 4 });
   * const lengths = await runtime.runApp(async (app) => {
   *   const lines = ["procpool", "forks", "processes"];
   *   const seen: number[] = [];
   *   for await (const length of app.forkStream(lines, (line) => line.length)) {
   *     seen.push(length);
   *   }
   *   return seen;
   * });
   * console.assert(lengths.join() === "8,5,9");
   * ```
   */
  forkStream<I, T>(
    items: Iterable<I> | AsyncIterable<I>,
    process: (item: I, lang: LangL) => Promise<T> | T,
    options?: ForkOptions,
  ): AsyncIterableIterator<T>;
  /** Runs a LangL script inline (process id 0), without taking a slot. */
  evalLang<T>(script: Process<T>): Promise<T>;
  /** Creates a shared variable. */
  newVar<T>(initial: T): SharedVar<T>;
  /** Runs `body` in a nested scope, which ends only when all its work has. */
  scope<T>(body: (app: AppL) => Promise<T>, options?: ScopeOptions): Promise<T>;
}
