// The scope's single-process entry points (forkProcess, tryForkProcess) and
// its inline ones (evalLang, newVar): argument checks, then a slot or a
// queued fork. Like _scope_batches.ts, they need nothing private from the
// scope, so the scope file keeps to its own bookkeeping.
import type { LangL, Process, SharedVar } from "../lang/lang.ts";
import { requireData, VarCell } from "../lang/shared_var.ts";
import { requireFunction } from "../_validate.ts";
import type { ForkOptions, ProcessHandle } from "./app.ts";
import { type CheckedForkOptions, checkForkOptions } from "./_options.ts";
import type { ProcessRecord } from "./process.ts";
import { handleFor } from "./_handle.ts";
import type { ForkedRecord } from "./_records.ts";
import { QueuedFork } from "./_queued_fork.ts";
import { runInline } from "./_eval_lang.ts";
// A value import of the module that imports this one: used only at call time.
import { Scope } from "./scope.ts";

/** `app.forkProcess` on `scope`. */
export function scopeForkProcess<T>(
  scope: Scope,
  process: Process<T>,
  options: ForkOptions | undefined,
): Promise<ProcessHandle<T>> {
  try {
    Scope.enter(scope, "forkProcess");
    requireFunction("forkProcess process", process);
    const checked = checkForkOptions("forkProcess", options);
    if (checked.signal?.aborted) return Promise.reject(checked.signal.reason);
    if (scope.core.slots.tryAcquire()) {
      return Promise.resolve(handleFor<T>(startProcess(scope, process, checked)));
    }
    return QueuedFork.queue(scope, process, checked) as Promise<ProcessHandle<T>>;
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `app.tryForkProcess` on `scope`. */
export function scopeTryForkProcess<T>(
  scope: Scope,
  process: Process<T>,
  options: ForkOptions | undefined,
): ProcessHandle<T> | undefined {
  Scope.enter(scope, "tryForkProcess");
  requireFunction("tryForkProcess process", process);
  const checked = checkForkOptions("tryForkProcess", options);
  if (checked.signal?.aborted) throw checked.signal.reason;
  if (!scope.core.slots.tryAcquire()) return undefined;
  return handleFor<T>(startProcess(scope, process, checked));
}

/**
 * Admits a process on a slot just taken with tryAcquire and runs its script
 * at once. If the admission fails, the slot is given back.
 */
function startProcess(
  scope: Scope,
  fn: (lang: LangL) => unknown,
  options: CheckedForkOptions,
): ProcessRecord {
  let record: ForkedRecord;
  try {
    record = scope.admitForked(options);
  } catch (error) {
    scope.core.slots.release();
    throw error;
  }
  record.start(fn);
  return record;
}

/** `app.evalLang` on `scope`. */
export function scopeEvalLang<T>(scope: Scope, script: Process<T>): Promise<T> {
  try {
    Scope.enter(scope, "evalLang");
    requireFunction("evalLang script", script);
    return runInline(scope, script);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `app.newVar` on `scope`. */
export function scopeNewVar<T>(scope: Scope, initial: T): SharedVar<T> {
  Scope.enter(scope, "newVar");
  requireData("newVar initial", initial);
  return new VarCell(scope.core.nextVarId(), scope.core, initial);
}
