// A forkProcess call waiting for a slot. It is its own entry in the pool's
// queue, so a queued fork costs one object besides its promise.
import type { LangL } from "../lang/lang.ts";
import { SlotWaiter } from "../runtime/slot_pool.ts";
import type { ProcessHandle } from "./app.ts";
import { type CheckedForkOptions, NO_FORK_OPTIONS } from "./_options.ts";
import type { ForkedRecord } from "./_records.ts";
import { handleFor } from "./_handle.ts";
import type { Scope } from "./scope.ts";
import { type Resolver, resolvingPromiseFor } from "../_settler.ts";
import { type AbortMember, joinAbort, leaveAbort } from "./_abort_fanout.ts";

/** Why a queued fork will not run; its internal promise fulfils with it. */
class Refusal {
  constructor(readonly reason: unknown) {}
}

// The grant is delivered through a promise reaction registered when the fork
// was queued, so that the script runs in the forker's async context (request
// ids, tracing and log contexts reach it), not in the context of whichever
// process happened to release the slot. A refusal is thrown here rather than
// rejected into the internal promise: the handle's promise rejects in the
// same job either way, and a promise that only fulfils is smaller.
function runGranted(granted: ForkedRecord | Refusal): ProcessHandle<never> {
  if (granted instanceof Refusal) throw granted.reason;
  // The script waited in the record's `_outcome` (see slotGranted).
  const script = granted._outcome as (lang: LangL) => unknown;
  granted._outcome = undefined;
  granted.start(script);
  return handleFor(granted);
}

const unresolved = (): void => {};

export class QueuedFork extends SlotWaiter implements Resolver<ForkedRecord | Refusal> {
  declare resolve: (granted: ForkedRecord | Refusal) => void;

  /** Queues a fork; the promise settles with the handle once the script runs. */
  static queue(
    scope: Scope,
    process: (lang: LangL) => unknown,
    options: CheckedForkOptions,
  ): Promise<ProcessHandle<never>> {
    const fork = options === NO_FORK_OPTIONS
      ? new QueuedFork(scope, process)
      : options.signal === undefined
      ? new OptionedFork(scope, process, options)
      : new SignalledFork(scope, process, options, options.signal);
    const handle = resolvingPromiseFor(fork).then(runGranted);
    try {
      scope.core.slots.enqueue(fork);
    } catch (error) {
      // The pool could not queue it (a backoff or rate sleep on a broken
      // clock): nothing of this fork may stay behind.
      fork.detach();
      throw error;
    }
    scope.workStarted();
    return handle;
  }

  protected constructor(scope: Scope, readonly process: (lang: LangL) => unknown) {
    super(scope);
    // Assigned here rather than as a class field (see RingEntry); set for
    // real by `queue` at once.
    this.resolve = unresolved;
  }

  /** None given: the usual fork carries no field for them (see OptionedFork). */
  get options(): CheckedForkOptions {
    return NO_FORK_OPTIONS;
  }

  get priority(): number {
    return this.options.priority;
  }

  /** The owner the pool knows, as the scope it is (not stored twice). */
  get scope(): Scope {
    return this.owner as Scope;
  }

  slotGranted(): void {
    const scope = this.owner as Scope;
    let record: ForkedRecord;
    try {
      // Admit before leaving: the scope must never look idle in between.
      record = scope.admitForked(this.options);
    } catch (error) {
      this.withdrawn(error);
      // Given back one microtask later: called from a release, a release
      // here would recurse once per failing waiter in the line.
      const slots = scope.core.slots;
      queueMicrotask(() => slots.release());
      return;
    }
    // Until it runs, in the forker's context (runGranted), a process's
    // script waits in the field that takes its outcome later.
    record._outcome = this.process;
    this.leave();
    this.resolve(record);
  }

  /** Called once the pool has let go of this waiter. */
  withdrawn(reason: unknown): void {
    this.leave();
    this.resolve(new Refusal(reason));
  }

  /** The pool gave up on this waiter (its retry sleep failed); it has let go of it. */
  waitFailed(reason: unknown): void {
    this.withdrawn(reason);
  }

  /** Undoes the constructor, for a fork that was never queued. */
  detach(): void {}

  protected leave(): void {
    (this.owner as Scope).workEnded();
  }
}

/** A queued fork with options of its own. */
class OptionedFork extends QueuedFork {
  readonly #options: CheckedForkOptions;

  constructor(scope: Scope, process: (lang: LangL) => unknown, options: CheckedForkOptions) {
    super(scope, process);
    this.#options = options;
  }

  override get options(): CheckedForkOptions {
    return this.#options;
  }
}

/**
 * A queued fork with a signal. The forks that share a signal share one abort
 * listener (see _abort_fanout.ts), so aborting many of them is linear.
 */
class SignalledFork extends OptionedFork implements AbortMember {
  constructor(
    scope: Scope,
    process: (lang: LangL) => unknown,
    options: CheckedForkOptions,
    readonly signal: AbortSignal,
  ) {
    super(scope, process, options);
    joinAbort(signal, this);
  }

  signalAborted(reason: unknown): void {
    if (this.scope.core.slots.withdraw(this)) this.withdrawn(reason);
  }

  override detach(): void {
    leaveAbort(this.signal, this);
  }

  protected override leave(): void {
    this.detach();
    super.leave();
  }
}
