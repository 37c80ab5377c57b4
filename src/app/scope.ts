// The AppL interpreter. A Scope owns the processes it forks, the forks still
// waiting for a slot, its inline scripts and its child scopes; it ends only
// when all of them have, and it never loses a failure.
import { ScopeClosedError } from "../errors.ts";
import type { LangL, Process, SharedVar } from "../lang/lang.ts";
import { detachedCall } from "../_validate.ts";
import type { RuntimeCore } from "../runtime/core.ts";
import { withWork } from "../runtime/_hooks.ts";
import type {
  AppL,
  AwaitOptions,
  ForkOptions,
  ProcessHandle,
  ProcessOutcome,
  ScopeOptions,
  WorkerForkOptions,
} from "./app.ts";
import { LinkedQueue } from "../_linked_queue.ts";
import * as waits from "./_result_wait.ts";
import type { BodyEndListener } from "./fork_stream.ts";
import {
  scopeForkAll,
  scopeForkAllSettled,
  scopeForkStream,
  scopeForkWorker,
} from "./_scope_batches.ts";
import type { ForkHost, ScopeDependent } from "./_fork_host.ts";
import { withLiveItems } from "./_live_items.ts";
import { refuseInsideScript } from "./_guard.ts";
import {
  scopeEvalLang,
  scopeForkProcess,
  scopeNewVar,
  scopeTryForkProcess,
} from "./_scope_forks.ts";
import type { CheckedForkOptions, CheckedScopeOptions } from "./_options.ts";
import type { ProcessOwner, ProcessRecord } from "./process.ts";
import { ForkedRecord } from "./_records.ts";
import { ScopeFailures } from "./_failures.ts";
import { admitUnderLease } from "./_lease_admission.ts";
import { cancelContents } from "./_scope_cancel.ts";
import { scopeNested } from "./_scope_nested.ts";

type Items<I> = Iterable<I> | AsyncIterable<I>;
type ItemProcess<I, T> = (item: I, lang: LangL) => Promise<T> | T;
type Stream<T> = AsyncIterableIterator<T>;

export class Scope implements AppL, ProcessOwner, ForkHost {
  readonly #controller = new AbortController();
  #state: "open" | "cancelled" | "closed" = "open";
  #cancelReason: unknown = undefined;
  readonly #running = new LinkedQueue<ForkedRecord>();
  /** Rare dependents (forkAll runs, evalLang scripts); hot ones have their own lists. */
  readonly #dependents = new Set<ScopeDependent>();
  /** The awaits waiting in this scope, but those its processes settle themselves (ForkedRecord). */
  readonly awaits = new LinkedQueue<waits.ResultWait>();
  readonly #children = new Set<Scope>();
  /** Work besides running processes that the scope must wait for. */
  #pendingWork = 0;
  readonly failures: ScopeFailures;
  #onIdle: (() => void) | undefined = undefined;

  constructor(
    readonly core: RuntimeCore,
    readonly parent: Scope | undefined,
    options: CheckedScopeOptions,
  ) {
    this.failures = new ScopeFailures(core.logger, options.failFast, options.onFailure);
    // A child scope is made by app.scope (_scope_nested.ts), which runs it at once.
    if (parent !== undefined) parent.#children.add(this);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Runs `body` as this scope's body and ends the scope (see API.md point 5). */
  run<T>(body: (app: AppL) => Promise<T>): Promise<T> {
    const kind = this.parent === undefined ? "runApp" : "scope";
    return withWork(this.core.hooks, kind, undefined, () => this.#run(body));
  }

  async #run<T>(body: (app: AppL) => Promise<T>): Promise<T> {
    let result: T | undefined;
    let bodyError: { error: unknown } | undefined;
    try {
      result = await body(this);
    } catch (error) {
      bodyError = { error };
      this.cancel(error);
    }
    // A stream the body did not finish reading is closed: nobody will read it.
    for (const dependent of [...this.#dependents]) {
      (dependent as Partial<BodyEndListener>).bodyEnded?.();
    }
    if (!this.#isIdle()) await new Promise<void>((resolve) => this.#onIdle = resolve);
    this.#state = "closed";
    if (this.parent !== undefined) this.parent.#childEnded(this);
    const failure = this.failures.conclude(bodyError);
    if (failure !== undefined) throw failure.error;
    return result as T;
  }

  /** Cancels everything in the scope: waits, awaits, processes, children (_scope_cancel.ts). */
  cancel(reason: unknown): void {
    if (this.#state !== "open") return;
    this.#state = "cancelled";
    this.#cancelReason = reason;
    this.#controller.abort(reason);
    cancelContents(this, reason, this.#running, this.#dependents, this.#children);
  }

  // ---- AppL ---------------------------------------------------------------

  forkProcess<T>(process: Process<T>, options?: ForkOptions): Promise<ProcessHandle<T>> {
    return scopeForkProcess(this, process, options);
  }

  tryForkProcess<T>(process: Process<T>, options?: ForkOptions): ProcessHandle<T> | undefined {
    return scopeTryForkProcess(this, process, options);
  }

  awaitResult<T>(handle: ProcessHandle<T>, options?: AwaitOptions): Promise<T> {
    try {
      Scope.enter(this, "awaitResult");
      return waits.awaitResult(this, handle, options) as Promise<T>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  forkAll<I, T>(items: Items<I>, process: ItemProcess<I, T>, options?: ForkOptions): Promise<T[]> {
    return scopeForkAll(this, items, process, options);
  }

  forkWorker<I, T>(module: URL | string, input: I, options?: WorkerForkOptions) {
    return scopeForkWorker<I, T>(this, module, input, options);
  }

  forkAllSettled<I, T>(
    items: Items<I>,
    process: ItemProcess<I, T>,
    options?: ForkOptions,
  ): Promise<ProcessOutcome<T>[]> {
    return scopeForkAllSettled(this, items, process, options);
  }

  forkStream<I, T>(items: Items<I>, process: ItemProcess<I, T>, options?: ForkOptions): Stream<T> {
    return scopeForkStream(this, items, process, options);
  }

  evalLang<T>(script: Process<T>): Promise<T> {
    return scopeEvalLang(this, script);
  }

  newVar<T>(initial: T): SharedVar<T> {
    return scopeNewVar(this, initial);
  }

  scope<T>(body: (app: AppL) => Promise<T>, options?: ScopeOptions): Promise<T> {
    return scopeNested(this, body, options);
  }

  // ---- for processes, queued forks and forkAll ------------------------------

  /**
   * Admits a forkProcess process without running its script yet: a slot
   * handed over by another process's bookkeeping is taken at once, but the
   * script must run in its forker's async context, one promise reaction
   * later (a batch's items: admitItem).
   *
   * Transactional: the process's setup calls user code (the logger, the
   * clock for `timeoutMs`), and if that throws, nothing stays registered and
   * the error propagates. The slot is the caller's to give back.
   */
  admitForked(options: CheckedForkOptions): ForkedRecord {
    const core = this.core;
    const record = new ForkedRecord(this, core.nextProcessId(), options.name);
    const shared = core.shared;
    if (shared === undefined) record.begin(options);
    else admitUnderLease(record, options, shared);
    this.#running.push(record);
    return record;
  }

  processStopped(record: ProcessRecord): void {
    // An item's batch holds the scope open (workStarted) until its last item
    // has stopped: no idle check to make. (Items are not in #running.) Kept
    // small, so that V8 inlines it into every item's stop.
    if (record.batch === undefined || record.status === "failed") this.#stopped(record);
  }

  /** processStopped's steps for a forked process that returned (ForkedRecord.returned). */
  forkedReturned(record: ProcessRecord): void {
    this.#running.remove(record as ForkedRecord);
    if (this.#onIdle !== undefined) this.#checkIdle();
  }

  #stopped(record: ProcessRecord): void {
    const failed = record.status === "failed";
    if (record.batch === undefined) {
      this.#running.remove(record as ForkedRecord);
      // A failure's idle check waits for failureSettled: onFailure may still fork.
      if (!failed) return this.#checkIdle();
    }
    if (this.failures.failed(record)) this.cancel(record.error);
  }

  failureSettled(record: ProcessRecord): void {
    this.failures.settled(record);
    this.#checkIdle();
  }

  /** Its running processes, its batches' items included, in the order they were admitted. */
  runningProcesses(): ProcessRecord[] {
    return withLiveItems(this.#running, this.#dependents);
  }

  /** Every await waiting in this scope, in no particular order (the test runtime's stuck report). */
  get resultWaits(): Iterable<{ readonly record: ProcessRecord }> {
    return waits.awaitsIn(this.awaits, this.#running);
  }

  /** Nested scopes still running (the test runtime describes a stuck program with them). */
  childScopes(): Iterable<Scope> {
    return this.#children;
  }

  failureObserved(record: ProcessRecord): void {
    this.failures.observed(record);
  }

  failureHandedBack(record: ProcessRecord): void {
    this.failures.handedBack(record);
  }

  addDependent(dependent: ScopeDependent): void {
    this.#dependents.add(dependent);
  }

  removeDependent(dependent: ScopeDependent): void {
    this.#dependents.delete(dependent);
  }

  workStarted(): void {
    this.#pendingWork++;
  }

  workEnded(): void {
    this.#pendingWork--;
    if (this.#onIdle !== undefined) this.#checkIdle();
  }

  closedError(): ScopeClosedError {
    return new ScopeClosedError("the scope was cancelled", { cause: this.#cancelReason });
  }

  // ---- internals ----------------------------------------------------------

  /** Every AppL operation's entry: receiver, nested-fork and open-scope checks. */
  static enter(scope: Scope | undefined, operation: string): void {
    if (typeof scope !== "object" || scope === null || !(#state in scope)) {
      throw detachedCall("app", operation);
    }
    refuseInsideScript(operation);
    if (scope.#state === "closed") {
      throw new ScopeClosedError(`app.${operation} was called after its scope ended`);
    }
    if (scope.#state === "cancelled") {
      throw new ScopeClosedError(`app.${operation} was called after its scope was cancelled`, {
        cause: scope.#cancelReason,
      });
    }
  }

  #isIdle(): boolean {
    return this.#running.size === 0 && this.#pendingWork === 0 && this.#children.size === 0;
  }

  #checkIdle(): void {
    if (this.#onIdle !== undefined && this.#isIdle()) {
      const resolve = this.#onIdle;
      this.#onIdle = undefined;
      resolve();
    }
  }

  #childEnded(child: Scope): void {
    this.#children.delete(child);
    this.#checkIdle();
  }
}
