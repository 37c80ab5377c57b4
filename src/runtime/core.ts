// The state a runtime shares with its interpreters: the slot pool, the clock,
// the random source, the logger, the counters and the id sequences. AppL and
// LangL interpreters receive this object; users never see it.
import { type Clock, isTimerClock, type TimerClock } from "./clock.ts";
import type { RuntimeLogger } from "./options.ts";
import type { RuntimeObserver } from "./observer.ts";
import { RandomStream } from "./random.ts";
import { createSlotPool, type SlotPool } from "./slot_pool.ts";
import type { RateOptions } from "./_rate_window.ts";
import type { PoolHooks } from "./_hooks.ts";
import { ObservedSlotPool } from "./_observed_slots.ts";
import type { WaitPolicy } from "./wait_policy.ts";
import { backendOf, type SharedCapacity } from "./shared/shared_capacity.ts";
import { createSharedSlotPool, type SharedSlotPool } from "./shared/shared_slot_pool.ts";
import { DebugGate } from "./_debug_gate.ts";

/** Stream ids below 1 are the runtime's own; processes use their id. */
const POOL_STREAM = -1;
const INLINE_STREAM = 0;

export class RuntimeCore {
  readonly slots: SlotPool;
  /** The pool again when the runtime has a shared capacity (leases); undefined for a local pool. */
  readonly shared: SharedSlotPool | undefined;
  /** The clock again if it has the signal-free timer fast path; decided once. */
  readonly timerClock: TimerClock | undefined;
  /**
   * With a shared capacity: loses the leases whose local deadline has passed.
   * LangL calls it before resuming a script from a delay or an evalIO, so that
   * a runtime paused past its deadline cancels before any script steps on.
   */
  readonly resumeGuard: (() => void) | undefined;
  started = 0;
  succeeded = 0;
  failed = 0;
  cancelled = 0;
  #nextProcessId = 1;
  #nextVarId = 1;
  #inlineRandom: RandomStream | undefined;
  /** Whether the logger takes debug records (`debug.enabled()`), asked once per process. */
  readonly debug: DebugGate;
  /** Warm workers kept per isolation kind (`RuntimeOptions.workers`). */
  workerLimit: number = navigator.hardwareConcurrency;

  constructor(
    maxProcesses: number,
    wait: WaitPolicy,
    readonly clock: Clock,
    readonly seed: number,
    readonly logger: RuntimeLogger,
    readonly observer: RuntimeObserver | undefined,
    /** OpenTelemetry and the timeline recorder; undefined when neither listens. */
    readonly hooks: PoolHooks | undefined,
    rate?: RateOptions,
    shared?: SharedCapacity,
    /** Runs procpool code that may call user code outside any script's context. */
    outside: (fn: () => void) => void = (fn) => fn(),
  ) {
    this.timerClock = isTimerClock(clock) ? clock : undefined;
    this.debug = new DebugGate(logger);
    const random = new RandomStream(seed, POOL_STREAM);
    const backend = shared === undefined ? undefined : backendOf(shared);
    let slots: SlotPool;
    if (backend === undefined) {
      this.shared = this.resumeGuard = undefined;
      slots = createSlotPool(maxProcesses, wait, clock, random, rate);
    } else {
      this.resumeGuard = () => this.shared!.manager.expireDue(outside);
      slots = this.shared = createSharedSlotPool(shared!, backend, {
        maxProcesses,
        wait,
        clock,
        random,
        rate,
        logger,
      });
    }
    this.slots = hooks === undefined ? slots : new ObservedSlotPool(slots, hooks, clock);
  }

  nextProcessId(): number {
    return this.#nextProcessId++;
  }

  nextVarId(): number {
    return this.#nextVarId++;
  }

  /**
   * The worker pool (src/worker/), started by the first forkWorker; typed
   * here only by what disposal needs, so the services do not import workers.
   */
  workers: { dispose(): Promise<void> } | undefined = undefined;

  /** Stops every worker, if any was started. */
  disposeWorkers(): Promise<void> {
    return this.workers?.dispose() ?? Promise.resolve();
  }

  /** Stops the lease manager, if any: leases back to the store, its connections closed (S6). */
  disposeShared(reason: unknown): Promise<void> {
    return this.shared?.dispose(reason) ?? Promise.resolve();
  }

  /** Process `id`'s own stream; `evalLang` scripts (id 0) share one. */
  randomFor(processId: number): RandomStream {
    if (processId !== INLINE_STREAM) return new RandomStream(this.seed, processId);
    return this.#inlineRandom ??= new RandomStream(this.seed, INLINE_STREAM);
  }
}
