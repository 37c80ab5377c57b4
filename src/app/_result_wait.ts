// An awaitResult call waiting for a running process: told by the process
// when it stops, by its own timer or signal, or by its scope's cancellation.
import { processLabel } from "../errors/_process_label.ts";
import { AwaitTimeoutError } from "../errors.ts";
import { QueueNode } from "../_linked_queue.ts";
import type { AwaitOptions } from "./app.ts";
import type { ProcessRecord, StopWaiter } from "./process.ts";
import { recordOf } from "./_handle.ts";
import type { RuntimeCore } from "../runtime/core.ts";
import { sleepOn } from "../runtime/clock.ts";
import { received } from "../_validate.ts";
import type { Scope } from "./scope.ts";
import { promiseFor, type Settler } from "../_settler.ts";
import { deliverOutcome } from "./_process_stop.ts";
import type { ForkedRecord } from "./_records.ts";
import { checkAwaitOptions } from "./_options.ts";

const noop = () => {};

/** The record behind a handle passed to awaitResult, checked at the boundary. */
function awaitedRecord(handle: unknown, core: RuntimeCore): ProcessRecord {
  const record = recordOf(handle);
  if (record === undefined) {
    throw new TypeError(
      `awaitResult handle must be a ProcessHandle from forkProcess or tryForkProcess, got ${
        received(handle)
      }`,
    );
  }
  if (record.core !== core) {
    throw new TypeError(
      `awaitResult: ${processLabel(record.id, record.name)}'s handle belongs to another runtime`,
    );
  }
  return record;
}

/** `scope.awaitResult(handle, options)`, past the scope's own checks. */
export function awaitResult(
  scope: Scope,
  handle: unknown,
  options: AwaitOptions | undefined,
): Promise<unknown> {
  const record = awaitedRecord(handle, scope.core);
  const checked = checkAwaitOptions(options);
  if (checked.signal?.aborted && record.status === "running") {
    return Promise.reject(checked.signal.reason);
  }
  if (record.status === "succeeded") return Promise.resolve(record.value);
  if (record.status !== "running") {
    record.markObserved();
    return Promise.reject(record.error);
  }
  return awaitRunning(scope, record, checked);
}

/** Waits for `record` to stop; the promise settles with its outcome. */
function awaitRunning(
  scope: Scope,
  record: ProcessRecord,
  options: AwaitOptions,
): Promise<unknown> {
  const bounded = options.signal !== undefined || options.timeoutMs !== undefined;
  if (!bounded && record.owner === scope && record.firstStopWaiter === undefined) {
    // Awaited records come from handles, which only forkProcess makes.
    const forked = record as ForkedRecord;
    const promise = promiseFor(forked);
    record.addStopWaiter(forked);
    return promise;
  }
  const wait = bounded
    ? new BoundedResultWait(scope, record, options)
    : new ResultWait(scope, record);
  const promise = promiseFor(wait);
  wait.join();
  return promise;
}

/** Whether `record` settles an await itself (see ForkedRecord). */
function awaitedInline(record: ProcessRecord): boolean {
  return record.firstStopWaiter === (record as unknown);
}

/** A scope's awaits: its ResultWaits and the awaits its running processes settle themselves. */
export function* awaitsIn(
  awaits: Iterable<ResultWait>,
  running: Iterable<ProcessRecord>,
): Generator<{ readonly record: ProcessRecord }> {
  for (const record of running) {
    if (awaitedInline(record)) yield { record };
  }
  yield* awaits;
}

/** Its scope was cancelled: an await from it waiting for `record` rejects with `reason`. */
export function giveUpOwnerWait(record: ProcessRecord, reason: () => unknown): void {
  if (!awaitedInline(record)) return;
  const forked = record as ForkedRecord;
  record.removeStopWaiter(forked);
  forked.giveUp(reason());
}

/**
 * An await the process does not settle itself (see ForkedRecord): ended by the
 * process's stop or the scope's cancellation, and by its own timer or signal
 * in BoundedResultWait.
 */
export class ResultWait extends QueueNode implements StopWaiter, Settler<unknown> {
  resolve!: (value: unknown) => void;
  reject!: (reason: unknown) => void;

  constructor(readonly scope: Scope, readonly record: ProcessRecord) {
    super();
  }

  join(): void {
    this.scope.awaits.push(this);
    this.record.addStopWaiter(this);
  }

  processStopped(record: ProcessRecord): void {
    if (this.leave()) deliverOutcome(record, this.resolve, this.reject);
  }

  giveUp(reason: unknown): void {
    if (!this.leave()) return;
    this.record.removeStopWaiter(this);
    this.reject(reason);
  }

  /** Unlinks the wait from its scope; false if it had already ended. */
  protected leave(): boolean {
    return this.scope.awaits.remove(this);
  }
}

/** An await bounded by its own `timeoutMs` or `signal`. */
class BoundedResultWait extends ResultWait {
  #timer: AbortController | undefined = undefined;
  #onAbort: (() => void) | undefined = undefined;

  constructor(scope: Scope, record: ProcessRecord, readonly options: AwaitOptions) {
    super(scope, record);
  }

  override join(): void {
    const { signal, timeoutMs } = this.options;
    const record = this.record;
    // The clock first: a sleep that throws leaves nothing registered (a wait
    // left behind would later take, and lose, the process's failure).
    if (timeoutMs !== undefined) {
      const timer = new AbortController();
      sleepOn(this.scope.core.clock, timeoutMs, timer.signal, "awaitResult timeoutMs").then(
        () => this.giveUp(new AwaitTimeoutError(record.id, timeoutMs)),
        noop,
      );
      this.#timer = timer;
    }
    super.join();
    if (signal !== undefined) {
      this.#onAbort = () => this.giveUp(signal.reason);
      signal.addEventListener("abort", this.#onAbort, { once: true });
    }
  }

  protected override leave(): boolean {
    if (!super.leave()) return false;
    this.#timer?.abort();
    if (this.#onAbort !== undefined) {
      this.options.signal!.removeEventListener("abort", this.#onAbort);
    }
    return true;
  }
}
