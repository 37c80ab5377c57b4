// The start rate (`RuntimeOptions.rate`): at most `limit` process starts in
// any window of `intervalMs` on the runtime's clock. The slot pool asks a
// `StartRate` before every start, through this small interface only, so that
// a store shared by a fleet (issue 13) can count the same starts for many
// runtimes without touching the pool's queueing or AppL.
import { requireNumber, requireObject, requirePositiveInteger, show } from "../_validate.ts";

/** Permission to start a process, counted over a sliding window. */
export interface StartRate {
  readonly limit: number;
  readonly intervalMs: number;
  /** Counts a start at `now` and returns true if the window has room; else false. */
  tryTake(now: number): boolean;
  /**
   * The earliest time, not before `now`, at which `tryTake` may succeed. A
   * shared store that cannot know it may answer a guess: the pool asks again
   * when that time comes.
   */
  nextFree(now: number): number;
}

/** The validated `RuntimeOptions.rate`. */
export interface RateOptions {
  readonly limit: number;
  readonly intervalMs: number;
}

/** Checks `RuntimeOptions.rate` at the boundary (API.md rule 10). */
export function checkRate(rate: unknown): RateOptions | undefined {
  if (rate === undefined) return undefined;
  requireObject("rate", rate);
  const { limit, intervalMs } = rate as Partial<RateOptions>;
  requirePositiveInteger("rate.limit", limit);
  requireNumber("rate.intervalMs", intervalMs);
  if (!(intervalMs > 0) || intervalMs === Infinity) {
    throw new RangeError(
      `rate.intervalMs must be a positive finite number, got ${show(intervalMs)}`,
    );
  }
  return { limit, intervalMs };
}

/**
 * The local start rate: a log of recent starts, kept as (time, count)
 * buckets because many starts share an instant (always on a virtual clock),
 * so it holds at most min(limit, distinct instants in a window) buckets
 * whatever `limit` is. Two parallel arrays used as a ring that doubles when
 * full: no object per start, which a queue package (denque, yocto-queue)
 * would allocate.
 */
export class SlidingWindow implements StartRate {
  #times = new Float64Array(4);
  #counts = new Float64Array(4);
  /** Index of the oldest bucket, and how many buckets are live. */
  #head = 0;
  #buckets = 0;
  /** Starts in the live buckets. */
  #inWindow = 0;

  constructor(readonly limit: number, readonly intervalMs: number) {}

  tryTake(now: number): boolean {
    this.#expire(now);
    if (this.#inWindow >= this.limit) return false;
    this.#inWindow++;
    const mask = this.#times.length - 1;
    if (this.#buckets > 0) {
      const last = (this.#head + this.#buckets - 1) & mask;
      if (this.#times[last] === now) {
        this.#counts[last]++;
        return true;
      }
    }
    if (this.#buckets === this.#times.length) this.#grow();
    const slot = (this.#head + this.#buckets) & (this.#times.length - 1);
    this.#times[slot] = now;
    this.#counts[slot] = 1;
    this.#buckets++;
    return true;
  }

  nextFree(now: number): number {
    this.#expire(now);
    if (this.#inWindow < this.limit) return now;
    // Full: room comes back when the oldest bucket leaves the window.
    return this.#times[this.#head] + this.intervalMs;
  }

  /** Drops the buckets that no window ending at `now` contains. */
  #expire(now: number): void {
    const times = this.#times;
    const mask = times.length - 1;
    while (this.#buckets > 0 && times[this.#head] + this.intervalMs <= now) {
      this.#inWindow -= this.#counts[this.#head];
      this.#head = (this.#head + 1) & mask;
      this.#buckets--;
    }
  }

  #grow(): void {
    const size = this.#times.length;
    const times = new Float64Array(size * 2);
    const counts = new Float64Array(size * 2);
    for (let i = 0; i < this.#buckets; i++) {
      const from = (this.#head + i) & (size - 1);
      times[i] = this.#times[from];
      counts[i] = this.#counts[from];
    }
    this.#times = times;
    this.#counts = counts;
    this.#head = 0;
  }
}
