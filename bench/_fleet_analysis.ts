// What bench:fleet computes from the holds its OS processes recorded: every
// hold is [start, end] in wall-clock µs (performance.timeOrigin +
// performance.now(), comparable across processes on one host), tagged with
// the process that made it. Pure functions, tested in
// tests/fleet_analysis_test.ts.
import { heldWithin as heldInside, maxConcurrent } from "../tests/_fleet_harness.ts";

/** One process holding one slot of the shared capacity. */
export interface Hold {
  /** Index of the OS process that held it. */
  proc: number;
  /** Wall-clock µs when the job started running (after its slot was granted). */
  start: number;
  /** Wall-clock µs when the job finished, just before the library's release. */
  end: number;
}

/** A time span in wall-clock µs, [from, to). */
export interface Window {
  from: number;
  to: number;
}

interface Event {
  t: number;
  proc: number;
  /** -1 for an end, +1 for a start. */
  step: -1 | 1;
}

/** Ends sort before starts at the same instant: a slot freed at t can be taken at t. */
function events(holds: readonly Hold[]): Event[] {
  const list: Event[] = [];
  for (const { proc, start, end } of holds) {
    list.push({ t: start, proc, step: 1 }, { t: end, proc, step: -1 });
  }
  return list.sort((a, b) => a.t - b.t || a.step - b.step);
}

const interval = ({ start, end }: Hold) => [start, end] as const;

/** The most holds open at one instant, across all processes. */
export function maxConcurrency(holds: readonly Hold[]): number {
  return maxConcurrent(holds.map(interval));
}

/** Held µs inside `window`, summed over all holds. */
export function heldWithin(holds: readonly Hold[], window: Window): number {
  return heldInside(holds.map(interval), window.from, window.to);
}

/** Held time / (limit × window length): the share of the fleet's capacity in use. */
export function utilisation(holds: readonly Hold[], limit: number, window: Window): number {
  return heldWithin(holds, window) / (limit * (window.to - window.from));
}

/** Holds that ended inside `window`, per second. */
export function completedPerSecond(holds: readonly Hold[], window: Window): number {
  const done = holds.filter(({ end }) => end >= window.from && end < window.to).length;
  return done / ((window.to - window.from) / 1e6);
}

/** Lengths of the holds that ended inside `window`, µs. */
export function holdLengths(holds: readonly Hold[], window: Window): number[] {
  return holds.filter(({ end }) => end >= window.from && end < window.to)
    .map(({ start, end }) => end - start);
}

/** Mean length of the holds that ended inside `window`, µs. */
export function meanHold(holds: readonly Hold[], window: Window): number {
  const lengths = holdLengths(holds, window);
  return lengths.reduce((sum, length) => sum + length, 0) / lengths.length;
}

/** Each process's part of the time held inside `window`, by process index. */
export function shares(holds: readonly Hold[], window: Window, processes: number): number[] {
  const held = Array.from(
    { length: processes },
    (_, proc) => heldWithin(holds.filter((hold) => hold.proc === proc), window),
  );
  const total = held.reduce((sum, h) => sum + h, 0);
  return held.map((h) => h / total);
}

/** Release→start gaps in µs, split by whether the start was in another process. */
export interface Handoffs {
  /** A release in one process → a start in another. */
  cross: number[];
  /** A release → a start in a process that had itself released (maybe a local hand-off). */
  local: number[];
  /** Starts inside the window that no pending release explains (the fleet was not full). */
  unpaired: number;
}

/**
 * Pairs starts with the releases that made room for them, in the merged event
 * stream of all processes. A release counts only when the fleet was full at
 * it (`limit` holds open just before it), or while room made by such a
 * release is still unfilled; those releases are pending until the fleet is
 * full again. A start whose own process has a pending release may have been
 * handed that slot locally, so it counts as local (and takes that release);
 * any other start takes the latest pending release, by another process: a
 * cross-process hand-off, and the gap is its latency (the latest, so the gap
 * is never overstated). With demand well above the limit, every release under
 * saturation has a waiter somewhere, so the gap is how long the freed slot
 * stayed unused. Only starts inside `window` are recorded (skip warm-up and
 * wind-down).
 */
export function handoffs(holds: readonly Hold[], limit: number, window: Window): Handoffs {
  const result: Handoffs = { cross: [], local: [], unpaired: 0 };
  let open = 0;
  let pending: Event[] = [];
  for (const event of events(holds)) {
    if (event.step === -1) {
      if (open === limit || pending.length > 0) pending.push(event);
      open--;
      continue;
    }
    open++;
    const inside = event.t >= window.from && event.t < window.to;
    let at = pending.findLastIndex((release) => release.proc === event.proc);
    if (at >= 0) {
      if (inside) result.local.push(event.t - pending[at].t);
    } else if (pending.length > 0) {
      at = pending.length - 1;
      if (inside) result.cross.push(event.t - pending[at].t);
    } else if (inside) {
      result.unpaired++;
    }
    if (at >= 0) pending.splice(at, 1);
    if (open >= limit) pending = [];
  }
  return result;
}
