// The scope's batch entry points (forkAll, forkAllSettled, forkStream,
// forkWorker): argument checks, then the run object that does the work. They
// live apart from Scope so that the scope file keeps to its own bookkeeping.
import type { LangL } from "../lang/lang.ts";
import { requireFunction, requireIterable } from "../_validate.ts";
import { withWork } from "../runtime/_hooks.ts";
import type { ForkOptions, ProcessHandle, ProcessOutcome, WorkerForkOptions } from "./app.ts";
import { type CheckedForkOptions, checkForkOptions } from "./_options.ts";
import { ForkAllRun } from "./fork_all.ts";
import { ForkAllSettledRun } from "./fork_all_settled.ts";
import { ForkStream } from "./fork_stream.ts";
import { forkWorker } from "./fork_worker.ts";
// A value import of the module that imports this one: used only at call time.
import { Scope } from "./scope.ts";

type Items<I> = Iterable<I> | AsyncIterable<I>;
type ItemProcess<I, T> = (item: I, lang: LangL) => Promise<T> | T;

/** `app.forkAll` on `scope`. */
export function scopeForkAll<I, T>(
  scope: Scope,
  items: Items<I>,
  process: ItemProcess<I, T>,
  options: ForkOptions | undefined,
): Promise<T[]> {
  try {
    const checked = batchCall(scope, "forkAll", items, process, options);
    const run = () => new ForkAllRun<I, T>(scope, items, process, checked).promise;
    return withWork(scope.core.hooks, "forkAll", checked.name, run);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `app.forkAllSettled` on `scope`. */
export function scopeForkAllSettled<I, T>(
  scope: Scope,
  items: Items<I>,
  process: ItemProcess<I, T>,
  options: ForkOptions | undefined,
): Promise<ProcessOutcome<T>[]> {
  try {
    const checked = batchCall(scope, "forkAllSettled", items, process, options);
    const run = () => new ForkAllSettledRun<I, T>(scope, items, process, checked).promise;
    return withWork(scope.core.hooks, "forkAllSettled", checked.name, run);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `app.forkStream` on `scope`. */
export function scopeForkStream<I, T>(
  scope: Scope,
  items: Items<I>,
  process: ItemProcess<I, T>,
  options: ForkOptions | undefined,
): AsyncIterableIterator<T> {
  const checked = batchCall(scope, "forkStream", items, process, options);
  return new ForkStream<I, T>(scope, items, process, checked);
}

/** `app.forkWorker` on `scope`. */
export function scopeForkWorker<I, T>(
  scope: Scope,
  module: URL | string,
  input: I,
  options: WorkerForkOptions | undefined,
): Promise<ProcessHandle<T>> {
  try {
    Scope.enter(scope, "forkWorker");
    return forkWorker<I, T>(scope, module, input, options);
  } catch (error) {
    return Promise.reject(error);
  }
}

function batchCall(
  scope: Scope,
  op: string,
  items: unknown,
  process: unknown,
  options: ForkOptions | undefined,
): CheckedForkOptions {
  Scope.enter(scope, op);
  requireIterable(`${op} items`, items);
  requireFunction(`${op} process`, process);
  return checkForkOptions(op, options);
}
