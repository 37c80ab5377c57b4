// A LangL delay in progress on a clock with the timer fast path: a timer plus
// a cancellation hook, no abort listener (adding and removing one per delay
// cost more than the delay itself).
import type { ProcessCancelledError } from "../errors.ts";
import { stopTimer, type TimerClock, type TimerEntry } from "../runtime/clock.ts";
import type { Settler } from "../_settler.ts";
import {
  type CancelHook,
  type Cancellation,
  removeCancelHook,
  removePlacedHook,
} from "./cancellation.ts";
import { cancelledByGuard } from "./_resume_guard.ts";

/**
 * A TimerEntry by shape rather than by `extends`: one constructor instead of
 * two on every delay.
 */
export class PendingDelay implements TimerEntry, CancelHook, Settler<void> {
  _clockState: unknown = undefined;
  resolve!: () => void;
  reject!: (reason: unknown) => void;
  /** Its place on the clock if the process's hook slot holds that (addPlacedHook), else -1. */
  place = -1;

  constructor(readonly clock: TimerClock, readonly cancellation: Cancellation) {}

  timerFired(): void {
    this.unhook();
    this.resolve();
  }

  cancelled(reason: ProcessCancelledError): void {
    this.clock[stopTimer](this);
    this.reject(reason);
  }

  protected unhook(): void {
    if (this.place >= 0) removePlacedHook(this.cancellation, this.place);
    else removeCancelHook(this.cancellation, this);
  }
}

/**
 * A delay on a runtime with a shared capacity: when it fires, the runtime
 * first loses the leases whose local deadline has passed (a pause may have
 * carried it past them), and a process cancelled by that stays put. Local
 * runtimes never make one, so their delays pay nothing for it.
 */
export class GuardedDelay extends PendingDelay {
  constructor(clock: TimerClock, cancellation: Cancellation, readonly guard: () => void) {
    super(clock, cancellation);
  }

  override timerFired(): void {
    // Unhooked first: the guard's cancellation then finds no hook of this
    // delay to call (a fired timer may no longer be on the clock to find).
    this.unhook();
    const reason = cancelledByGuard(this.guard, this.cancellation);
    if (reason === undefined) this.resolve();
    else this.reject(reason);
  }
}
