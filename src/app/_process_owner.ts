// What a process sees of the scope that owns it and of those waiting for it
// to stop; kept apart so that ProcessRecord's file is only the process's life.
import type { RuntimeCore } from "../runtime/core.ts";
import type { ProcessRecord } from "./process.ts";
import type { ScriptLane } from "./_guard.ts";

/** Told once when a process stops. */
export interface StopWaiter {
  processStopped(record: ProcessRecord): void;
}

/** The forkAll run a process is an item of, as the process sees it. */
export interface ProcessBatch extends StopWaiter {
  readonly lane: ScriptLane | undefined;
}

/** The scope a process belongs to, as the process sees it. */
export interface ProcessOwner {
  readonly core: RuntimeCore;
  processStopped(record: ProcessRecord): void;
  /** `processStopped` for a forkProcess process that succeeded (ForkedRecord.returned). */
  forkedReturned(record: ProcessRecord): void;
  /**
   * A failure, after everything that could deliver it has heard of it: a
   * batch (forkAll and its kin) that will deliver the failure must mark it
   * observed in its own processStopped, or onFailure reports it as well.
   */
  failureSettled(record: ProcessRecord): void;
  failureObserved(record: ProcessRecord): void;
}
