// A process's life: start (marked as a LangL script), stop, and the
// bookkeeping after the stop (status, counters, slot release, owner, waiters),
// which always runs outside the script's context.
import { ProcessCancelledError, ProcessFailedError, ProcessTimeoutError } from "../errors.ts";
import { cancellationReason, requestCancellation } from "../lang/cancellation.ts";
import { QueueNode } from "../_linked_queue.ts";
import { LangInterpreter } from "../lang/interpreter.ts";
import type { LeaseHold } from "./_lease_admission.ts";
import type { RuntimeCore } from "../runtime/core.ts";
import { sleepOn } from "../runtime/clock.ts";
import { logSafely } from "../runtime/_safe_log.ts";
import type { ProcessStatus } from "./app.ts";
import type { CheckedForkOptions } from "./_options.ts";
import { callScript, type Mark, outsideScripts, runMarked, type ScriptLane } from "./_guard.ts";
import type { ProcessProbe, ScriptCall } from "../runtime/_hooks.ts";
import type { ProcessOwner, StopWaiter } from "./_process_owner.ts";
import { warnCleanupError } from "./_process_cleanup.ts";
import { type AbortMember, joinAbort, leaveAbort } from "./_abort_fanout.ts";

export type { ProcessOwner, StopWaiter };

// deno-lint-ignore no-explicit-any
type ScriptFunction = (...args: any[]) => unknown;

const noop = () => {};

// A QueueNode so that the scope owning a process can keep its running
// processes in an O(1) intrusive list rather than a hashed Set.
export class ProcessRecord extends QueueNode implements AbortMember, Mark {
  /** As a script mark (its script runs marked by its record): never procpool's own code. */
  readonly internal = false;
  // Dropped when the process stops (see #retire).
  #lang: LangInterpreter | undefined;
  status: ProcessStatus = "running";
  value: unknown = undefined;
  /** Why it did not succeed: a ProcessFailedError or ProcessCancelledError. */
  error: Error | undefined = undefined;
  observed = false;
  /** A handed-over process's script, until it runs in its forker's context. */
  pendingScript: ScriptFunction | undefined = undefined;
  /** The forkAll run this process is an item of, and the item's index. */
  batch: StopWaiter | undefined = undefined;
  tag = 0;
  /** The lane the script runs in (forkAll over an array), else its own mark. */
  lane: ScriptLane | undefined = undefined;
  /** What the runtime's instruments follow of this process; undefined without any. */
  probe: ProcessProbe | undefined = undefined;
  // Usually zero or one waiter: keep one inline, spill to a Set (O(1)
  // removal when many awaits with timeouts give up on one long process).
  #stopWaiter: StopWaiter | undefined = undefined;
  #moreStopWaiters: Set<StopWaiter> | undefined = undefined;
  #timer: AbortController | undefined = undefined;
  #debug = false;
  #cancelSeen = false;
  /** `options.signal`, while the process runs; it shares the signal's one listener. */
  #signal: AbortSignal | undefined = undefined;
  /** Its lease on the runtime's shared capacity, while it runs; undefined without one. */
  lease: LeaseHold | undefined = undefined;

  constructor(
    readonly owner: ProcessOwner,
    readonly id: number,
    readonly name: string | undefined,
  ) {
    super();
    this.#lang = new LangInterpreter(owner.core, id, name);
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
    if (options.timeoutMs !== undefined) this.#armTimeout(options.timeoutMs);
    if (debug) {
      try {
        outsideScripts(() =>
          core.logger.debug("forked process {processId}", { processId: this.id, name: this.name })
        );
      } catch (error) {
        this.#timer?.abort();
        throw error;
      }
    }
    this.#debug = debug;
    core.started++;
    const hooks = core.hooks;
    if (hooks !== undefined) this.probe = hooks.processStarted(this);
    if (options.signal !== undefined) this.#link(options.signal);
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
      } else {
        result = withItem ? runMarked(this, fn, item, this.lang) : runMarked(this, fn, this.lang);
      }
    } catch (error) {
      // Settle asynchronously even for a synchronous throw: a hand-off chain of
      // such processes must not grow the stack.
      result = Promise.reject(error);
    }
    // Registered outside the script's mark, so the bookkeeping is not LangL code.
    // Bound methods: smaller than two closures over `this`.
    Promise.resolve(result).then(this.#returned.bind(this), this.#threw.bind(this));
  }

  #returned(value: unknown): void {
    this.stop(true, value);
  }

  #threw(error: unknown): void {
    this.stop(false, error);
  }

  invokePending(): void {
    const script = this.pendingScript!;
    this.pendingScript = undefined;
    this.invoke(script);
  }

  cancel(reason?: unknown): void {
    if (this.status !== "running") return;
    const label = this.name === undefined
      ? `process ${this.id}`
      : `process ${this.id} (${this.name})`;
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
    else (this.#moreStopWaiters ??= new Set()).add(waiter);
  }

  removeStopWaiter(waiter: StopWaiter): void {
    if (this.#stopWaiter !== waiter) {
      this.#moreStopWaiters?.delete(waiter);
      return;
    }
    const next: StopWaiter | undefined = this.#moreStopWaiters?.values().next().value;
    if (next !== undefined) this.#moreStopWaiters!.delete(next);
    this.#stopWaiter = next;
  }

  stopped(): Promise<void> {
    if (this.status !== "running") return Promise.resolve();
    return new Promise((resolve) => this.addStopWaiter({ processStopped: () => resolve() }));
  }

  /** Hands the settled outcome to a promise's resolvers; delivering a failure observes it. */
  deliver(resolve: (value: unknown) => void, reject: (reason: unknown) => void): void {
    if (this.status === "succeeded") {
      resolve(this.value);
    } else {
      this.markObserved();
      reject(this.error);
    }
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
    queueMicrotask(() => this.#cancelSeen = true);
    this.probe?.cancelRequested(error);
    return requestCancellation(this.lang, error);
  }

  #armTimeout(timeoutMs: number): void {
    const timer = new AbortController();
    sleepOn(this.core.clock, timeoutMs, timer.signal, "fork timeoutMs").then(
      () =>
        this.status === "running" &&
        this.#requestCancel(new ProcessTimeoutError(this.id, timeoutMs, this.name)),
      noop,
    );
    this.#timer = timer;
  }

  #link(signal: AbortSignal): void {
    if (signal.aborted) {
      this.cancel(signal.reason);
      return;
    }
    this.#signal = signal;
    joinAbort(signal, this);
  }

  /** Whether the process logs its start and stop at debug level (asked once, at its start). */
  get logsDebug(): boolean {
    return this.#debug;
  }

  /** Called once, when the script's outcome is known (see also _lane_script.ts). */
  stop(returned: boolean, outcome: unknown): void {
    const core = this.owner.core;
    if (returned) {
      this.status = "succeeded";
      this.value = outcome;
      core.succeeded++;
    } else if (this.#cancelSeen) {
      this.status = "cancelled";
      this.error = cancellationReason(this.lang);
      core.cancelled++;
      if (outcome !== this.error) warnCleanupError(this, outcome);
    } else {
      this.status = "failed";
      this.error = new ProcessFailedError(this.id, outcome, this.name);
      core.failed++;
    }
    this.#timer?.abort();
    if (this.#signal !== undefined) leaveAbort(this.#signal, this);
    this.probe?.stopped(this);
    // The owner and the batch hear first, so that a failure can cancel what
    // it must (failFast withdraws the scope's queued forks, forkAll stops
    // feeding) before the freed slot is handed to the next waiter. The
    // waiters hear last, so that by the time an await resumes, the process
    // that got the slot has started.
    this.owner.processStopped(this);
    this.batch?.processStopped(this);
    core.slots.release();
    // After the local slot, so that a local fork the slot went to may get this lease too.
    if (this.lease !== undefined) this.lease.release(core.shared!);
    const first = this.#stopWaiter;
    if (first !== undefined) {
      const more = this.#moreStopWaiters;
      this.#stopWaiter = this.#moreStopWaiters = undefined;
      first.processStopped(this);
      if (more !== undefined) { for (const waiter of more) waiter.processStopped(this); }
    }
    if (this.status === "failed") this.owner.failureSettled(this);
    if (this.#debug) {
      logSafely(core.logger, "debug", "process {processId} {status}", {
        processId: this.id,
        name: this.name,
        status: this.status,
        error: this.error,
      });
    }
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
    this.pendingScript = undefined;
  }
}
