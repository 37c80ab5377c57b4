// A process's life: start (marked as a LangL script), stop, and the
// bookkeeping after the stop (status and counters here; the slot, owner and
// waiters in _process_stop.ts), which always runs outside the script's context.
import { ProcessCancelledError, ProcessFailedError, ProcessTimeoutError } from "../errors.ts";
import { processLabel } from "../errors/_process_label.ts";
import { cancellationReason, requestCancellation } from "../lang/cancellation.ts";
import { LangInterpreter } from "../lang/interpreter.ts";
import { beginWithExtras, ProcessExtras } from "./_process_extras.ts";
import { announceStop } from "./_process_stop.ts";
import type { RuntimeCore } from "../runtime/core.ts";
import type { ProcessStatus } from "./app.ts";
import type { CheckedForkOptions } from "./_options.ts";
import { callMarked, callScript, type Mark, whenSettled } from "./_guard.ts";
import type { ProcessProbe, ScriptCall } from "../runtime/_hooks.ts";
import type { ProcessBatch, ProcessOwner, StopWaiter } from "./_process_owner.ts";
import { warnCleanupError } from "./_process_cleanup.ts";
import type { AbortMember } from "./_abort_fanout.ts";

export type { ProcessBatch, ProcessOwner, StopWaiter };

// deno-lint-ignore no-explicit-any
type ScriptFunction = (...args: any[]) => unknown;

// _flags: the status in the two lowest bits (an index into STATUSES), then booleans.
const STATUSES: readonly ProcessStatus[] = ["running", "succeeded", "failed", "cancelled"];
/** @internal The status bits of a process that returned (see ForkedRecord.returned). */
export const SUCCEEDED = 1;
const FAILED = 2;
const CANCELLED = 3;
const OBSERVED = 4;
const DEBUG = 8;
const CANCEL_SEEN = 16;

// Every field is paid by every fork (see _process_extras.ts): what few
// processes use lives in `_extras`, the status and the booleans in `_flags`.
// The links of the scope's list of running processes are a forked record's
// alone (ForkedRecord): a batch keeps its items itself. No class fields or
// `#` members, which V8 initialises slowly in a base class when it builds a
// subclass's instance (BENCHMARKS.md, "forkAll after 6d497a9").
export class ProcessRecord implements AbortMember, Mark {
  declare readonly owner: ProcessOwner;
  declare readonly id: number;
  /** @internal Dropped when the process stops (see stop). */
  declare _lang: LangInterpreter | undefined;
  /** @internal The value or error once stopped; a handed-over process's script before it runs. */
  declare _outcome: unknown;
  /** @internal */ declare _flags: number;
  /** @internal Usually zero or one waiter: one inline, the rest in the extras. */
  declare _stopWaiter: StopWaiter | undefined;
  /** @internal */ declare _extras: ProcessExtras | undefined;

  constructor(owner: ProcessOwner, id: number, name: string | undefined) {
    this.owner = owner;
    this.id = id;
    this._lang = new LangInterpreter(owner.core, id, name);
    this._outcome = undefined;
    this._flags = 0;
    this._stopWaiter = undefined;
    this._extras = undefined;
    if (name !== undefined) this.extras().name = name;
  }

  /** `ForkOptions.name` (with `[index]` for a forkAll item), if it was given. */
  get name(): string | undefined {
    return this._extras?.name;
  }

  /** As a script mark (its script runs marked by its record): never procpool's own code. */
  get internal(): boolean {
    return false;
  }

  get status(): ProcessStatus {
    return STATUSES[this._flags & 3];
  }

  /** The value, once succeeded. */
  get value(): unknown {
    return this.status === "succeeded" ? this._outcome : undefined;
  }

  /** Why it did not succeed: a ProcessFailedError or ProcessCancelledError. */
  get error(): Error | undefined {
    const status = this.status;
    return status === "failed" || status === "cancelled" ? this._outcome as Error : undefined;
  }

  /** Whether its failure has been delivered (see ScopeFailures). */
  get observed(): boolean {
    return (this._flags & OBSERVED) !== 0;
  }

  set observed(observed: boolean) {
    this._flags = observed ? this._flags | OBSERVED : this._flags & ~OBSERVED;
  }

  /** The forkAll run this process is an item of (see ItemRecord). */
  get batch(): ProcessBatch | undefined {
    return undefined;
  }

  /** What the runtime's instruments follow of this process; undefined without any. */
  get probe(): ProcessProbe | undefined {
    return this._extras?.probe;
  }

  /** Its rarely used parts (a lease, a timer, ...), created on first use. */
  extras(): ProcessExtras {
    return this._extras ??= new ProcessExtras();
  }

  /** The script's LangL object, which also holds the process's cancellation state; while it runs. */
  get lang(): LangInterpreter {
    return this._lang!;
  }

  get core(): RuntimeCore {
    return this.owner.core;
  }

  /**
   * Counts the process as started: it holds a slot from here on. The script
   * runs in `invoke` (or, for an unnamed forkProcess, `ForkedRecord.start`),
   * which a hand-off defers to the forker's own context.
   */
  begin(options: CheckedForkOptions): void {
    const core = this.owner.core;
    // User code first (the logger, the clock): if it throws, nothing has
    // been registered yet, and the caller gives the slot back.
    // Asked once per process: LogTape's check walks the category tree.
    const debug = core.debug.enabled();
    // Most processes need none of the rest: kept apart, so that V8 inlines
    // this into every admission (a forkAll item's among them).
    if (
      debug || options.timeoutMs !== undefined || options.signal !== undefined ||
      core.hooks !== undefined
    ) return beginWithExtras(this, options, debug);
    core.started++;
  }

  /**
   * Runs the script, `fn(lang)` or `fn(item, lang)` for forkAll, marked as
   * LangL code and in the caller's async context, which the process inherits.
   * Not for a process in a lane (forkAll over an array): see _lane_script.ts.
   */
  invoke(fn: ScriptFunction, item?: unknown, withItem = false): void {
    const probe = this.probe;
    let result: unknown;
    try {
      // The probe may run the script in a context of its own (its span); the
      // bookkeeping below is registered outside it.
      if (probe !== undefined) {
        result = probe.enter(callScript as ScriptCall, this, fn, item, withItem);
      } else if (withItem) {
        result = callScript(this, fn, item, true);
      } else {
        // A forkProcess with extras (name, timeout, signal, lease), no probe.
        result = callMarked(this, fn, this._lang);
      }
    } catch (error) {
      // Settle asynchronously even for a synchronous throw: a hand-off chain of
      // such processes must not grow the stack.
      result = Promise.reject(error);
    }
    // Registered outside the script's mark, so the bookkeeping is not LangL
    // code; the result was adopted under it (see `adopted`). Bound methods:
    // smaller than two closures over `this`.
    whenSettled(result, this.returned.bind(this), this._threw.bind(this));
  }

  _threw(error: unknown): void {
    this.stop(false, error);
  }

  cancel(reason?: unknown): void {
    if (this.status !== "running") return;
    const label = processLabel(this.id, this.name);
    this._requestCancel(new ProcessCancelledError(`${label} was cancelled`, { cause: reason }));
  }

  /** Its lease was lost (S2): cancelled with the lease's `LeaseLostError`. */
  leaseLost(reason: ProcessCancelledError): void {
    if (this.status === "running") this._requestCancel(reason);
  }

  /** Its `options.signal` aborted while it ran. */
  signalAborted(reason: unknown): void {
    this.cancel(reason);
  }

  /** Tells `waiter` when the process stops; call only while running. */
  addStopWaiter(waiter: StopWaiter): void {
    if (this._stopWaiter === undefined) this._stopWaiter = waiter;
    else (this.extras().moreStopWaiters ??= new Set()).add(waiter);
  }

  /** The first of the waiters told when the process stops (see giveUpOwnerWait). */
  get firstStopWaiter(): StopWaiter | undefined {
    return this._stopWaiter;
  }

  removeStopWaiter(waiter: StopWaiter): void {
    const more = this._extras?.moreStopWaiters;
    if (this._stopWaiter !== waiter) {
      more?.delete(waiter);
      return;
    }
    const next: StopWaiter | undefined = more?.values().next().value;
    if (next !== undefined) more!.delete(next);
    this._stopWaiter = next;
  }

  markObserved(): void {
    if (this.status === "failed" && !this.observed) {
      this.observed = true;
      this.owner.failureObserved(this);
    }
  }

  /**
   * The process's outcome is seen one microtask after it settles, so a cancel
   * can land in between: a process that had already thrown would then be
   * counted cancelled and its error lost. The request takes effect for the
   * status only from the next microtask; a settlement queued before it (one
   * that happened before the request) is judged without it.
   */
  _requestCancel(error: ProcessCancelledError): boolean {
    if (cancellationReason(this.lang) !== undefined) return false;
    // Queued before the request runs its hooks, so that a rejection those
    // hooks cause settles after it.
    queueMicrotask(() => this._flags |= CANCEL_SEEN);
    this.probe?.cancelRequested(error);
    return requestCancellation(this.lang, error);
  }

  /** Its fork's `timeoutMs` ran out (see armTimeout). */
  timedOut(timeoutMs: number): void {
    if (this.status !== "running") return;
    this._requestCancel(new ProcessTimeoutError(this.id, timeoutMs, this.name));
  }

  /** Whether the process logs its start and stop at debug level (asked once, at its start). */
  get logsDebug(): boolean {
    return (this._flags & DEBUG) !== 0;
  }

  set logsDebug(logs: boolean) {
    this._flags = logs ? this._flags | DEBUG : this._flags & ~DEBUG;
  }

  /**
   * `stop(true, value)`; a process with nobody to tell but its owner, batch
   * and pool (no extras, stop waiter or debug log) stops here, in
   * announceStop's order: an unnamed forkAll item without a timeout, signal,
   * instrument (OTel, timeline) or debug log, whose stop path V8 could not
   * inline whole through announceStop (its inlining budget ran out); a
   * forkProcess process has its own (ForkedRecord.returned). A step added to
   * announceStop for every process must be added to both.
   */
  returned(value: unknown): void {
    if (this._extras !== undefined || this._stopWaiter !== undefined || this._flags !== 0) {
      return this.stop(true, value);
    }
    const core = this.owner.core;
    this._flags = SUCCEEDED;
    this._outcome = value;
    core.succeeded++;
    this.owner.processStopped(this);
    this.batch?.processStopped(this);
    core.slots.release();
    this._lang = undefined;
  }

  /** Called once, when the script's outcome is known (see also _lane_script.ts). */
  stop(returned: boolean, outcome: unknown): void {
    const core = this.owner.core;
    if (returned) {
      this._flags |= SUCCEEDED;
      this._outcome = outcome;
      core.succeeded++;
    } else if ((this._flags & CANCEL_SEEN) !== 0) {
      this._flags |= CANCELLED;
      const reason = this._outcome = cancellationReason(this.lang);
      core.cancelled++;
      if (outcome !== reason) warnCleanupError(this, outcome);
    } else {
      this._flags |= FAILED;
      this._outcome = new ProcessFailedError(this.id, outcome, this.name);
      core.failed++;
    }
    const first = this._stopWaiter;
    this._stopWaiter = undefined;
    announceStop(this, this._extras, first);
    // Lets go of what only a running process needs: a stopped record can stay
    // reachable in V8's old generation until the next full GC, and all it
    // points at then survives every minor GC (dropping the LangL object cut
    // what survived a fork+await drain's minor GCs by about 15 %).
    this._lang = undefined;
  }
}
