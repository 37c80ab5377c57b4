// A forkProcess call waiting for a slot. It is its own entry in the pool's
// queue, so a queued fork costs one object besides its promise.
//
// Its script must run in its forker's async context, marked as LangL code
// (the nested-fork guard). Both come for the price of one
// AsyncLocalStorage.run, paid when the fork is queued: the reaction that
// will start the script is registered inside it, with the fork itself as
// the mark, so a hand-off enters no new context. The mark reads "internal"
// until the script starts and "script" from then on, like a lane's
// (_guard.ts): the reaction that hears the script's end runs in that
// context too, and its bookkeeping marks itself as procpool's own for its
// synchronous stretch when that stretch can call no user code and schedule
// nothing (a quiet stop, RuntimeCore.quietStops); otherwise it leaves the
// context first. Either way it starts no script itself: the freed slot's
// next script starts in a reaction of its own fork.
import type { LangL } from "../lang/lang.ts";
import { SlotWaiter } from "../runtime/slot_pool.ts";
import type { ScriptCall } from "../runtime/_hooks.ts";
import type { ProcessHandle } from "./app.ts";
import { type CheckedForkOptions, NO_FORK_OPTIONS } from "./_options.ts";
import type { ProcessRecord } from "./process.ts";
import { handleFor } from "./_handle.ts";
import type { Scope } from "./scope.ts";
import { type Resolver, resolvingPromiseFor } from "../_settler.ts";
import { type AbortMember, joinAbort, leaveAbort } from "./_abort_fanout.ts";
import { callScript, outsideScripts, runMarked, type StandInMark } from "./_guard.ts";

/** Why a queued fork will not run; its internal promise fulfils with it. */
class Refusal {
  constructor(readonly reason: unknown) {}
}

// The grant is delivered through a promise reaction registered when the fork
// was queued, under the fork's mark, so that the script runs in the forker's
// async context (request ids, tracing and log contexts reach it), not in the
// context of whichever process happened to release the slot. A refusal is
// thrown here rather than rejected into the internal promise: the handle's
// promise rejects in the same job either way, and a promise that only
// fulfils is smaller.
function runGranted(fork: QueuedFork): ProcessHandle<never> {
  const granted = fork.granted;
  if (granted instanceof Refusal) throw granted.reason;
  fork.start(granted!);
  return handleFor(granted!);
}

function awaitGrant(grant: Promise<QueuedFork>): Promise<ProcessHandle<never>> {
  return grant.then(runGranted);
}

// The same, for a fork queued behind too many others to enter its mark
// early (see MARKED_WAITERS): its script enters its own mark at the start.
function runGrantedUnmarked(fork: QueuedFork): ProcessHandle<never> {
  const granted = fork.granted;
  if (granted instanceof Refusal) throw granted.reason;
  granted!.invoke(fork.process);
  return handleFor(granted!);
}

/**
 * How many waiters at most enter their marks when queued. Each mark entered
 * is a copy of the context and a WeakMap entry (an ephemeron), about 0.4 KB,
 * that live as long as the fork waits. Worse, marks entered early that are
 * still waiting when a full GC starts make V8 fall back to its linear
 * ephemeron algorithm: in the fork+await row (200 000 forks queued at once)
 * the second full GC took 2.2-4.0 s with 128 to 1 024 such marks against
 * 0.2-0.6 s with 64 or none (`--trace-gc-nvp`: `mark.ephemeron.linear`).
 * Behind this many, a fork enters its mark when it starts, as a fork that
 * finds a free slot does.
 */
const MARKED_WAITERS = 32;

export class QueuedFork extends SlotWaiter implements Resolver<QueuedFork>, StandInMark {
  resolve!: (fork: QueuedFork) => void;
  /** The mark's state (see the top of this file): procpool's own code runs under it while true. */
  internal = true;
  /** Its process once granted, or why it will not run. */
  granted: ProcessRecord | Refusal | undefined = undefined;

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
    const grant = resolvingPromiseFor(fork);
    const handle = scope.core.slots.waiting < MARKED_WAITERS
      ? runMarked(fork, awaitGrant, grant)
      : grant.then(runGrantedUnmarked);
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

  get standsFor(): unknown {
    return this.granted;
  }

  slotGranted(): void {
    const scope = this.scope;
    let record: ProcessRecord;
    try {
      // Admit before leaving: the scope must never look idle in between.
      record = scope.admitProcess(this.options);
    } catch (error) {
      this.withdrawn(error);
      // Given back one microtask later: called from a release, a release
      // here would recurse once per failing waiter in the line. Queued
      // outside any mark, so that the release is not taken for a script.
      const slots = scope.core.slots;
      outsideScripts(() => queueMicrotask(() => slots.release()));
      return;
    }
    this.granted = record;
    this.leave();
    this.resolve(this);
  }

  /** Called once the pool has let go of this waiter. */
  withdrawn(reason: unknown): void {
    this.leave();
    this.granted = new Refusal(reason);
    this.resolve(this);
  }

  /**
   * Runs the granted process's script, in the job of the reaction registered
   * under this fork's mark (see the top of this file).
   */
  start(record: ProcessRecord): void {
    const probe = record.probe;
    let result: unknown;
    try {
      if (probe !== undefined) {
        // The probe runs the script marked by its record, in its span.
        result = probe.enter(callScript as ScriptCall, record, this.process, undefined, false);
      } else {
        this.internal = false;
        result = this.process(record.lang);
      }
    } catch (error) {
      // Settled asynchronously even for a synchronous throw: a hand-off
      // chain of such processes must not grow the stack.
      result = Promise.reject(error);
    }
    // Whatever runs in this context from now on is the script's.
    this.internal = false;
    // Bound methods: smaller than two closures over `this`.
    Promise.resolve(result).then(this.#returned.bind(this), this.#threw.bind(this));
  }

  #returned(value: unknown): void {
    const record = this.granted as ProcessRecord;
    if (!record.quietStop) return stopOutside(record, true, value);
    this.internal = true;
    try {
      record.stop(true, value);
    } finally {
      this.internal = false;
    }
  }

  #threw(error: unknown): void {
    stopOutside(this.granted as ProcessRecord, false, error);
  }

  /** The pool gave up on this waiter (its retry sleep failed); it has let go of it. */
  waitFailed(reason: unknown): void {
    this.withdrawn(reason);
  }

  /** Undoes the constructor, for a fork that was never queued. */
  detach(): void {}

  protected leave(): void {
    this.scope.workEnded();
  }
}

// Apart from the methods above, whose every call would otherwise allocate
// the context this closure captures.
function stopOutside(record: ProcessRecord, returned: boolean, outcome: unknown): void {
  outsideScripts(() => record.stop(returned, outcome));
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
