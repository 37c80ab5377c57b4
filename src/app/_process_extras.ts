// The parts of a process that few processes use, in one object created only
// when one of them is first needed. Every field here was a field of every
// process record, and the record's size is paid on every fork: 8 bytes a
// field, and one more inline-cache store per field in its constructor, which
// a hand-off runs mostly unoptimised.
import type { ProcessProbe } from "../runtime/_hooks.ts";
import type { LeaseHold } from "./_lease_admission.ts";
import type { StopWaiter } from "./_process_owner.ts";
import type { ProcessRecord } from "./process.ts";
import type { CheckedForkOptions } from "./_options.ts";
import { logForked } from "./_process_log.ts";
import { sleepOn } from "../runtime/clock.ts";
import { joinAbort } from "./_abort_fanout.ts";
import { isInsideMark, outsideScripts } from "./_guard.ts";

export class ProcessExtras {
  /** `ForkOptions.name`: most processes have none. */
  name: string | undefined = undefined;
  /** Cancels the fork's `timeoutMs` sleep once the process stops. */
  timer: AbortController | undefined = undefined;
  /** `options.signal`, while the process runs; it shares the signal's one listener. */
  signal: AbortSignal | undefined = undefined;
  /** Its lease on the runtime's shared capacity, while it runs. */
  lease: LeaseHold | undefined = undefined;
  /** What the runtime's instruments follow of this process. */
  probe: ProcessProbe | undefined = undefined;
  /** Waiters beyond the first: a Set for O(1) removal when many awaits give up. */
  moreStopWaiters: Set<StopWaiter> | undefined = undefined;
}

const noop = () => {};

/** Arms the fork's `timeoutMs` on the runtime's clock. */
export function armTimeout(record: ProcessRecord, timeoutMs: number): void {
  // A lane item's quiet stop hands its slot over in the lane, under its
  // mark (see _lane_script.ts): the next process's timer must not inherit it.
  if (isInsideMark()) return outsideScripts(() => armTimeout(record, timeoutMs));
  const timer = new AbortController();
  sleepOn(record.core.clock, timeoutMs, timer.signal, "fork timeoutMs").then(
    () => record.timedOut(timeoutMs),
    noop,
  );
  record.extras().timer = timer;
}

/** Cancels the process when `options.signal` aborts (at once if it has). */
export function linkSignal(record: ProcessRecord, signal: AbortSignal): void {
  if (signal.aborted) {
    record.cancel(signal.reason);
    return;
  }
  record.extras().signal = signal;
  joinAbort(signal, record);
}

/** `ProcessRecord.begin`'s part for a process with a timeout, a signal, a debug log or instruments. */
export function beginWithExtras(
  record: ProcessRecord,
  options: CheckedForkOptions,
  debug: boolean,
): void {
  const core = record.owner.core;
  if (options.timeoutMs !== undefined) armTimeout(record, options.timeoutMs);
  if (debug) {
    try {
      logForked(record);
    } catch (error) {
      record._extras?.timer?.abort();
      throw error;
    }
    record.logsDebug = true;
  }
  core.started++;
  const hooks = core.hooks;
  if (hooks !== undefined) record.extras().probe = hooks.processStarted(record);
  if (options.signal !== undefined) linkSignal(record, options.signal);
}
