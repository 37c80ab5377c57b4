/**
 * A clock whose time moves only when told to (or, in a test runtime, when
 * nothing else can happen).
 *
 * @module
 */
import { setImmediate } from "node:timers";
import TinyQueue from "tinyqueue";
import {
  type Clock,
  placeTimer,
  startTimer,
  stopTimer,
  timerAt,
  TimerEntry,
} from "../runtime/clock.ts";
import { requireDuration, requireNumber, requireSignal, show } from "../_validate.ts";

/** The timers due at one instant, in the order they were started. */
class Bucket {
  readonly entries: TimerEntry[] = [];
  /** Entries not yet stopped. */
  live = 0;
  constructor(readonly deadline: number) {}
}

/** What `sleep` puts on the clock. */
class Sleep extends TimerEntry {
  onAbort: (() => void) | undefined = undefined;
  constructor(readonly resolve: () => void, readonly signal: AbortSignal | undefined) {
    super();
  }

  timerFired(): void {
    if (this.onAbort !== undefined) this.signal!.removeEventListener("abort", this.onAbort);
    this.resolve();
  }
}

/** The clock's range: time must be able to move by 1 ms everywhere in it. */
const LIMIT = Number.MAX_SAFE_INTEGER;

// A timer's place (see TimerClock) is its deadline modulo PLACE_SPAN and its
// index in its bucket, in one small integer (a V8 Smi, stored without a
// write barrier). The deadline is found again from the time: a timer shorter
// than PLACE_SPAN has the only deadline of that residue in [now, now + SPAN).
const PLACE_SPAN = 1 << 15;
const PLACE_SLOTS = 1 << 15;

/** One macrotask turn: everything already queued as a microtask has run. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Fires the sleepers at the earliest deadline; false if none. Internal. */
export let fireEarliest: (clock: VirtualClock) => boolean;

/** Calls `hook` once, at the next timer started on `clock` (a test runtime waking from idle). */
export let wakeOnNextTimer: (clock: VirtualClock, hook: (() => void) | undefined) => void;

/**
 * A virtual clock. `sleep` registers a sleeper; `advance` moves time forward
 * and fires the sleepers that fall due, in time order (sleepers due at the same
 * instant fire in the order they slept). A test runtime advances it by itself.
 *
 * @example
 * ```ts
 * import { VirtualClock } from "@procpool/procpool/testing";
 * const clock = new VirtualClock();
 * const fired: number[] = [];
 * clock.sleep(20).then(() => fired.push(clock.now()));
 * clock.sleep(10).then(() => fired.push(clock.now()));
 * await clock.advance(25);
 * console.assert(fired.join() === "10,20" && clock.now() === 25 && clock.pending === 0);
 * ```
 */
export class VirtualClock implements Clock {
  #now: number;
  #pending = 0;
  // Many sleepers share an instant (processes stepping in lockstep), so the
  // heap holds distinct deadlines and each bucket keeps its sleepers in order.
  readonly #buckets = new Map<number, Bucket>();
  readonly #deadlines = new TinyQueue<number>();
  /** Timers that would end past the clock's range: never due, kept only as a count. */
  readonly #never = new Bucket(Infinity);

  #onTimer: (() => void) | undefined = undefined;

  static {
    fireEarliest = (clock) => clock.#fireEarliest();
    wakeOnNextTimer = (clock, hook) => clock.#onTimer = hook;
  }

  /**
   * Creates a clock reading `start` (default 0) milliseconds. `start` must lie
   * within ±`Number.MAX_SAFE_INTEGER` (2^53 − 1), where a step of 1 ms can
   * still be represented; else RangeError.
   */
  constructor(start = 0) {
    requireNumber("VirtualClock start", start);
    if (!(Math.abs(start) <= LIMIT)) {
      throw new RangeError(
        `VirtualClock start must be a number from -${LIMIT} to ${LIMIT} ` +
          `(Number.MAX_SAFE_INTEGER, so that time can move by 1 ms), got ${show(start)}`,
      );
    }
    this.#now = start;
  }

  /** The virtual time, in milliseconds. */
  now(): number {
    return this.#now;
  }

  /** Sleepers not yet fired (aborted ones do not count). */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Resolves when virtual time reaches now + `ms`; rejects with `signal.reason`
   * on abort. A sleep that would end past `Number.MAX_SAFE_INTEGER` never fires.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    try {
      requireDuration("sleep ms", ms);
      if (signal !== undefined) requireSignal("sleep signal", signal);
    } catch (error) {
      return Promise.reject(error);
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const sleep = new Sleep(resolve, signal);
      this[startTimer](ms, sleep);
      if (signal !== undefined) {
        sleep.onAbort = () => {
          this[stopTimer](sleep);
          reject(signal.reason);
        };
        signal.addEventListener("abort", sleep.onAbort, { once: true });
      }
    });
  }

  /**
   * The fast path LangL's `delay` uses: a timer with no AbortSignal.
   *
   * @ignore
   */
  [startTimer](ms: number, entry: TimerEntry): void {
    this[placeTimer](ms, entry);
  }

  /**
   * The fast path with a place to find the timer again (see `timerAt`).
   *
   * @ignore
   */
  [placeTimer](ms: number, entry: TimerEntry): number {
    if (this.#onTimer !== undefined) {
      const wake = this.#onTimer;
      this.#onTimer = undefined;
      wake();
    }
    const deadline = this.#now + ms;
    if (deadline > LIMIT) {
      // Past the range, time could not reach it exactly: it never falls due.
      this.#never.live++;
      this.#pending++;
      entry._clockState = this.#never;
      return -1;
    }
    let bucket = this.#buckets.get(deadline);
    if (bucket === undefined) {
      bucket = new Bucket(deadline);
      this.#buckets.set(deadline, bucket);
      this.#deadlines.push(deadline);
    }
    const index = bucket.entries.push(entry) - 1;
    bucket.live++;
    this.#pending++;
    entry._clockState = bucket;
    return ms < PLACE_SPAN && index < PLACE_SLOTS && Number.isInteger(deadline) && deadline >= 0
      ? (deadline % PLACE_SPAN) * PLACE_SLOTS + index
      : -1;
  }

  /**
   * The running timer at `place`, as `placeTimer` returned it.
   *
   * @ignore
   */
  [timerAt](place: number): TimerEntry | undefined {
    const index = place % PLACE_SLOTS;
    const residue = (place - index) / PLACE_SLOTS;
    // The deadline is an integer, not before now and less than PLACE_SPAN after it.
    const from = Math.ceil(this.#now);
    const deadline = from + (((residue - from) % PLACE_SPAN) + PLACE_SPAN) % PLACE_SPAN;
    const bucket = this.#buckets.get(deadline);
    const entry = bucket?.entries[index];
    return entry !== undefined && entry._clockState === bucket ? entry : undefined;
  }

  /**
   * Stops a timer started with the fast path.
   *
   * @ignore
   */
  [stopTimer](entry: TimerEntry): void {
    const bucket = entry._clockState;
    if (!(bucket instanceof Bucket)) return;
    entry._clockState = undefined;
    bucket.live--;
    this.#pending--;
  }

  /**
   * Moves time forward by `ms`, firing due sleepers in time order and letting
   * the code they wake run (one macrotask turn per instant) before the next.
   * Rejects with RangeError if that would move the clock past
   * `Number.MAX_SAFE_INTEGER`.
   */
  async advance(ms: number): Promise<void> {
    requireDuration("advance ms", ms);
    const target = this.#now + ms;
    if (target > LIMIT) {
      throw new RangeError(
        `advance ms ${show(ms)} would move the clock from ${this.#now} past ` +
          `Number.MAX_SAFE_INTEGER (${LIMIT}), the end of its range`,
      );
    }
    for (let next = this.#earliest(); next !== undefined && next.deadline <= target;) {
      this.#fireEarliest();
      await nextTurn();
      next = this.#earliest();
    }
    if (target > this.#now) this.#now = target;
  }

  /** The earliest bucket with a live sleeper; drops emptied ones on the way. */
  #earliest(): Bucket | undefined {
    for (let deadline = this.#deadlines.peek(); deadline !== undefined;) {
      const bucket = this.#buckets.get(deadline)!;
      if (bucket.live > 0) return bucket;
      this.#deadlines.pop();
      this.#buckets.delete(deadline);
      bucket.entries.length = 0;
      deadline = this.#deadlines.peek();
    }
    return undefined;
  }

  #fireEarliest(): boolean {
    const bucket = this.#earliest();
    if (bucket === undefined) return false;
    this.#deadlines.pop();
    this.#buckets.delete(bucket.deadline);
    if (bucket.deadline > this.#now) this.#now = bucket.deadline;
    for (const entry of bucket.entries) {
      // An entry stopped (or restarted elsewhere) no longer points here.
      if (entry._clockState !== bucket) continue;
      entry._clockState = undefined;
      this.#pending--;
      entry.timerFired();
    }
    // A bucket that lived long enough to be promoted to the old generation
    // would keep its young entries (and their promises) alive through the
    // next scavenges until a full GC: most of the survivors of a run of
    // delays were such leftovers. Emptied, the dead bucket holds nothing.
    bucket.entries.length = 0;
    return true;
  }
}
