// A shared runtime's resume guard at LangL's resume points (RuntimeCore.
// resumeGuard): before a delay or an evalIO hands control back to its script,
// the runtime loses the leases whose local deadline passed, which cancels
// their processes; a cancelled one does not step on (S1 after a pause).
import { type Cancellation, cancellationReason, throwIfCancelled } from "./cancellation.ts";
/** Runs `guard`; whether `cancellation` is cancelled after it. */
export function resumedCancelled(guard: () => void, cancellation: Cancellation): boolean {
  guard();
  return cancellationReason(cancellation) !== undefined;
}

/** Settles as `promise` does, after the guard, unless that cancelled the process. */
export function afterGuard<T>(
  promise: Promise<T>,
  guard: () => void,
  lang: Cancellation,
): Promise<T> {
  const resume = () => {
    guard();
    throwIfCancelled(lang);
  };
  return promise.then((value) => {
    resume();
    return value;
  }, (error) => {
    resume();
    throw error;
  });
}
