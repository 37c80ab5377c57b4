// Who hears of a process's stop, and in which order, once its status is final.
import { logSafely } from "../runtime/_safe_log.ts";
import { leaveAbort } from "./_abort_fanout.ts";
import type { ProcessExtras } from "./_process_extras.ts";
import type { ProcessRecord, StopWaiter } from "./process.ts";

/** Tells everyone concerned that `record` stopped; `first` is its first stop waiter. */
export function announceStop(
  record: ProcessRecord,
  extras: ProcessExtras | undefined,
  first: StopWaiter | undefined,
): void {
  const core = record.owner.core;
  if (extras !== undefined) {
    extras.timer?.abort();
    if (extras.signal !== undefined) leaveAbort(extras.signal, record);
    extras.probe?.stopped(record);
  }
  // ProcessRecord.returned and ForkedRecord.returned repeat the steps below
  // for a process with no extras or waiters: keep the three in step.
  // The owner and the batch hear first, so that a failure can cancel what
  // it must (failFast withdraws the scope's queued forks, forkAll stops
  // feeding) before the freed slot is handed to the next waiter. The
  // waiters hear last, so that by the time an await resumes, the process
  // that got the slot has started.
  record.owner.processStopped(record);
  record.batch?.processStopped(record);
  core.slots.release();
  // After the local slot, so that a local fork the slot went to may get this lease too.
  if (extras?.lease !== undefined) extras.lease.release(core.shared!);
  if (first !== undefined) {
    const more = extras?.moreStopWaiters;
    if (more !== undefined) extras!.moreStopWaiters = undefined;
    first.processStopped(record);
    if (more !== undefined) { for (const waiter of more) waiter.processStopped(record); }
  }
  if (record.status === "failed") record.owner.failureSettled(record);
  if (record.logsDebug) {
    logSafely(core.logger, "debug", "process {processId} {status}", {
      processId: record.id,
      name: record.name,
      status: record.status,
      error: record.error,
    });
  }
}

/** Hands a stopped process's outcome to a promise's resolvers; delivering a failure observes it. */
export function deliverOutcome(
  record: ProcessRecord,
  resolve: (value: unknown) => void,
  reject: (reason: unknown) => void,
): void {
  if (record.status === "succeeded") {
    resolve(record.value);
  } else {
    record.markObserved();
    reject(record.error);
  }
}

/** Resolves once `record` has stopped. */
export function stoppedPromise(record: ProcessRecord): Promise<void> {
  if (record.status !== "running") return Promise.resolve();
  return new Promise((resolve) => record.addStopWaiter({ processStopped: () => resolve() }));
}
