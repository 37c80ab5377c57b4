// A process's life: start (marked as a LangL script), stop, and the
// bookkeeping after the stop (status and counters here; the slot, owner and
// waiters in _process_stop.ts), which always runs outside the script's context.
import { ProcessCancelledError, ProcessFailedError, ProcessTimeoutError } from "../errors.ts";
import { processLabel } from "../errors/_process_label.ts";
import { cancellationReason, requestCancellation } from "../lang/cancellation.ts";
import type { QueueNode } from "../_linked_queue.ts";
import { LangInterpreter } from "../lang/interpreter.ts";
import { armTimeout, linkSignal, ProcessExtras } from "./_process_extras.ts";
import { announceStop } from "./_process_stop.ts";
import type { RuntimeCore } from "../runtime/core.ts";
import type { ProcessStatus } from "./app.ts";
import type { CheckedForkOptions } from "./_options.ts";
import { callMarked, callScript, type Mark, whenSettled } from "./_guard.ts";
import type { ProcessProbe, ScriptCall } from "../runtime/_hooks.ts";
import type { ProcessBatch, ProcessOwner, StopWaiter } from "./_process_owner.ts";
import { warnCleanupError } from "./_process_cleanup.ts";
import { logForked } from "./_process_log.ts";
import type { AbortMember } from "./_abort_fanout.ts";

export type { ProcessBatch, ProcessOwner, StopWaiter };

// deno-lint-ignore no-explicit-any
type ScriptFunction = (...args: any[]) => unknown;

// #flags: the status in the two lowest bits (an index into STATUSES), then booleans.
const STATUSES: readonly ProcessStatus[] = ["running", "succeeded", "failed", "cancelled"];
const SUCCEEDED = 1;
const FAILED = 2;
const CANCELLED = 3;
const OBSERVED = 4;
const DEBUG = 8;
const CANCEL_SEEN = 16;

// A QueueNode (its two link fields declared here rather than inherited, one
// constructor fewer) so that the scope owning a process can keep its running
// processes in an O(1) intrusive list rather than a hashed Set. Every field
// is paid by every fork (see _process_extras.ts): what few processes use
// lives in `#extras`, the status and the booleans in `#flags`.
export class ProcessRecord implements QueueNode, AbortMember, Mark {
  /** @internal */ _prev: QueueNode | undefined = undefined;
  /** @internal */ _next: QueueNode | undefined = undefined;
  // Dropped when the process stops (see #retire).
  #lang: LangInterpreter | undefined;
  /**
   * The value once succeeded, the error once failed or cancelled; before its
   * script runs, a handed-over process's script (see `pendingScript`).
   */
  #outcome: unknown = undefined;
  #flags = 0;
  // Usually zero or one waiter: one inline, the rest in the extras.
  #stopWaiter: StopWaiter | undefined = undefined;
  #extras: ProcessExtras | undefined = undefined;

  constructor(
    readonly owner: ProcessOwner,
    readonly id: number,
    name: string | undefined,
  ) {
    this.#lang = new LangInterpreter(owner.core, id, name);
    if (name !== undefined) this.extras().name = name;
  }

  /** `ForkOptions.name` (with `[index]` for a forkAll item), if it was given. */
  get name(): string | undefined {
    return this.#extras?.name;
  }

  /** As a script mark (its script runs marked by its record): never procpool's own code. */
  get internal(): boolean {
    return false;
  }

  get status(): ProcessStatus {
    return STATUSES[this.#flags & 3];
  }

  /** The value, once succeeded. */
  get value(): unknown {
    return this.status === "succeeded" ? this.#outcome : undefined;
  }

  /** Why it did not succeed: a ProcessFailedError or ProcessCancelledError. */
  get error(): Error | undefined {
    const status = this.status;
    return status === "failed" || status === "cancelled" ? this.#outcome as Error : undefined;
  }

  /** Whether its failure has been delivered (see ScopeFailures). */
  get observed(): boolean {
    return (this.#flags & OBSERVED) !== 0;
  }

  set observed(observed: boolean) {
    this.#flags = observed ? this.#flags | OBSERVED : this.#flags & ~OBSERVED;
  }

  /** A handed-over process's script, until it runs in its forker's context. */
  set pendingScript(script: ScriptFunction) {
    this.#outcome = script;
  }

  /** The forkAll run this process is an item of (see ItemRecord). */
  get batch(): ProcessBatch | undefined {
    return undefined;
  }

  /** What the runtime's instruments follow of this process; undefined without any. */
  get probe(): ProcessProbe | undefined {
    return this.#extras?.probe;
  }

  /** Its rarely used parts (a lease, a timer, ...), created on first use. */
  extras(): ProcessExtras {
    return this.#extras ??= new ProcessExtras();
  }

  /** The script's LangL object, which also holds the process's cancellation state; while it runs. */
  get lang(): LangInterpreter {
    return this.#lang!;
  }

  get core(): RuntimeCore {
    return this.owner.core;
  }

  /**
   * Counts the process as started: it holds a slot from here on. The script
   * runs in `invoke`, which a hand-off defers to the forker's own context.
   */
  begin(options: CheckedForkOptions): void {
    const core = this.owner.core;
    // User code first (the logger, the clock): if it throws, nothing has
    // been registered yet, and the caller gives the slot back.
    // Asked once per process: LogTape's check walks the category tree.
    const debug = core.debug.enabled();
    if (options.timeoutMs !== undefined) armTimeout(this, options.timeoutMs);
    if (debug) {
      try {
        logForked(this);
      } catch (error) {
        this.#extras?.timer?.abort();
        throw error;
      }
      this.#flags |= DEBUG;
    }
    core.started++;
    const hooks = core.hooks;
    if (hooks !== undefined) this.extras().probe = hooks.processStarted(this);
    if (options.signal !== undefined) linkSignal(this, options.signal);
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
        // A forkProcess script (forkAll's items always come with theirs).
        result = callMarked(this, fn, this.#lang);
      }
    } catch (error) {
      // Settle asynchronously even for a synchronous throw: a hand-off chain of
      // such processes must not grow the stack.
      result = Promise.reject(error);
    }
    // Registered outside the script's mark, so the bookkeeping is not LangL
    // code; the result was adopted under it (see `adopted`). Bound methods:
    // smaller than two closures over `this`.
    whenSettled(result, this.#returned.bind(this), this.#threw.bind(this));
  }

  #returned(value: unknown): void {
    this.stop(true, value);
  }

  #threw(error: unknown): void {
    this.stop(false, error);
  }

  invokePending(): void {
    const script = this.#outcome as ScriptFunction;
    this.#outcome = undefined;
    this.invoke(script);
  }

  cancel(reason?: unknown): void {
    if (this.status !== "running") return;
    const label = processLabel(this.id, this.name);
    this.#requestCancel(new ProcessCancelledError(`${label} was cancelled`, { cause: reason }));
  }

  /** Its lease was lost (S2): cancelled with the lease's `LeaseLostError`. */
  leaseLost(reason: ProcessCancelledError): void {
    if (this.status === "running") this.#requestCancel(reason);
  }

  /** Its `options.signal` aborted while it ran. */
  signalAborted(reason: unknown): void {
    this.cancel(reason);
  }

  /** Tells `waiter` when the process stops; call only while running. */
  addStopWaiter(waiter: StopWaiter): void {
    if (this.#stopWaiter === undefined) this.#stopWaiter = waiter;
    else (this.extras().moreStopWaiters ??= new Set()).add(waiter);
  }

  /** The first of the waiters told when the process stops (see giveUpOwnerWait). */
  get firstStopWaiter(): StopWaiter | undefined {
    return this.#stopWaiter;
  }

  removeStopWaiter(waiter: StopWaiter): void {
    const more = this.#extras?.moreStopWaiters;
    if (this.#stopWaiter !== waiter) {
      more?.delete(waiter);
      return;
    }
    const next: StopWaiter | undefined = more?.values().next().value;
    if (next !== undefined) more!.delete(next);
    this.#stopWaiter = next;
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
  #requestCancel(error: ProcessCancelledError): boolean {
    if (cancellationReason(this.lang) !== undefined) return false;
    // Queued before the request runs its hooks, so that a rejection those
    // hooks cause settles after it.
    queueMicrotask(() => this.#flags |= CANCEL_SEEN);
    this.probe?.cancelRequested(error);
    return requestCancellation(this.lang, error);
  }

  /** Its fork's `timeoutMs` ran out (see armTimeout). */
  timedOut(timeoutMs: number): void {
    if (this.status !== "running") return;
    this.#requestCancel(new ProcessTimeoutError(this.id, timeoutMs, this.name));
  }

  /** Whether the process logs its start and stop at debug level (asked once, at its start). */
  get logsDebug(): boolean {
    return (this.#flags & DEBUG) !== 0;
  }

  /** Called once, when the script's outcome is known (see also _lane_script.ts). */
  stop(returned: boolean, outcome: unknown): void {
    const core = this.owner.core;
    if (returned) {
      this.#flags |= SUCCEEDED;
      this.#outcome = outcome;
      core.succeeded++;
    } else if ((this.#flags & CANCEL_SEEN) !== 0) {
      this.#flags |= CANCELLED;
      const reason = this.#outcome = cancellationReason(this.lang);
      core.cancelled++;
      if (outcome !== reason) warnCleanupError(this, outcome);
    } else {
      this.#flags |= FAILED;
      this.#outcome = new ProcessFailedError(this.id, outcome, this.name);
      core.failed++;
    }
    const first = this.#stopWaiter;
    this.#stopWaiter = undefined;
    announceStop(this, this.#extras, first);
    this.#retire();
  }

  /**
   * Lets go of what only a running process needs. A stopped record can stay
   * reachable from objects that outlived it, in V8's old generation, until
   * the next full GC, and then all it points at survives every minor GC:
   * dropping the LangL object here cut what survived the minor GCs of a
   * fork+await drain by about 15 % (`--trace-gc-nvp`).
   */
  #retire(): void {
    this.#lang = undefined;
  }
}
