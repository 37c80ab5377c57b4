// A shared runtime's resume guard (RuntimeCore.resumeGuard) at LangL's resume
// points: before a delay or an evalIO hands control back to its script, the
// runtime loses the leases whose local deadline has passed, which cancels
// their processes; one cancelled by that does not step on (S1 after a pause).
import { type Cancellation, cancellationReason } from "./cancellation.ts";

/** Runs `guard`; the reason it cancelled `process` with, if it did. */
export function cancelledByGuard(guard: () => void, process: Cancellation): unknown {
  if (cancellationReason(process) !== undefined) return undefined;
  guard();
  return cancellationReason(process);
}

/**
 * Settles as `promise` does, after the guard. If the guard cancelled the
 * process and `refuse` is set, it rejects with that reason instead (an IO
 * error that came with it is dropped: the process is cancelled either way).
 */
export function afterGuard<T>(
  promise: Promise<T>,
  guard: () => void,
  process: Cancellation,
  refuse: boolean,
): Promise<T> {
  const resume = () => {
    const reason = cancelledByGuard(guard, process);
    if (reason !== undefined && refuse) throw reason;
  };
  return promise.then((value) => {
    resume();
    return value;
  }, (error) => {
    resume();
    throw error;
  });
}
