/**
 * What the fleet example (`fleet.ts`) checks in the jobs its OS processes
 * report: the bound (never more jobs at once than the limit) and the fencing
 * tokens (never two jobs at once under one token).
 *
 * @module
 */

/** One job, as the child that ran it saw it. */
export interface JobRecord {
  /** The runtime (OS process) that ran it: A, B, C, ... */
  runtime: string;
  /** Its number within its runtime, from 1. */
  job: number;
  /** The fencing token of the lease it ran under. */
  fence: number;
  /** Wall-clock µs when it started: comparable across processes on one host. */
  startUs: number;
  /** Wall-clock µs when it ended. */
  endUs: number;
}

/** The most jobs whose [start, end) intervals overlap at one instant. */
export function peakOverlap(records: readonly JobRecord[]): number {
  const events = records.flatMap((r) => [[r.startUs, 1], [r.endUs, -1]] as const);
  // At equal times, ends first: a job that ends as another starts did not overlap it.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0, peak = 0;
  for (const [, step] of events) peak = Math.max(peak, now += step);
  return peak;
}

/** Pairs of jobs that overlapped in time under the same fencing token (should be none). */
export function sharedTokens(records: readonly JobRecord[]): number {
  const byFence = Map.groupBy(records, (r) => r.fence);
  let overlaps = 0;
  for (const group of byFence.values()) {
    const sorted = group.toSorted((a, b) => a.startUs - b.startUs);
    for (let i = 1; i < sorted.length; i++) if (sorted[i].startUs < sorted[i - 1].endUs) overlaps++;
  }
  return overlaps;
}
