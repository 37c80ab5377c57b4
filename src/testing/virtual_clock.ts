/**
 * A clock whose time moves only when told to (or, in a test runtime, when
 * nothing else can happen).
 *
 * @module
 */
import { setImmediate } from "node:timers";
import TinyQueue from "tinyqueue";
import type { Clock } from "../runtime/clock.ts";
import { requireDuration, requireNumber, show } from "../_validate.ts";

interface Sleeper {
  readonly deadline: number;
  readonly seq: number;
  readonly resolve: () => void;
  readonly signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  done: boolean;
}

function earlierFirst(a: Sleeper, b: Sleeper): number {
  return a.deadline - b.deadline || a.seq - b.seq;
}

/** One macrotask turn: everything already queued as a microtask has run. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Fires the sleepers at the earliest deadline; false if none. Internal. */
export let fireEarliest: (clock: VirtualClock) => boolean;

/**
 * A virtual clock. `sleep` registers a sleeper; `advance` moves time forward
 * and fires the sleepers that fall due, in time order (sleepers due at the same
 * instant fire in the order they slept). A test runtime advances it by itself.
 *
 * @example
 * ```ts
 * import { VirtualClock } from "../../testing.ts";
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
  #seq = 0;
  #pending = 0;
  readonly #sleepers = new TinyQueue<Sleeper>([], earlierFirst);

  static {
    fireEarliest = (clock) => clock.#fireEarliest();
  }

  /** Creates a clock reading `start` (default 0) milliseconds. */
  constructor(start = 0) {
    requireNumber("VirtualClock start", start);
    if (!Number.isFinite(start)) {
      throw new RangeError(`VirtualClock start must be a finite number, got ${show(start)}`);
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

  /** Resolves when virtual time reaches now + `ms`; rejects with `signal.reason` on abort. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    try {
      requireDuration("sleep ms", ms);
    } catch (error) {
      return Promise.reject(error);
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const sleeper: Sleeper = {
        deadline: this.#now + ms,
        seq: this.#seq++,
        resolve,
        signal,
        onAbort: undefined,
        done: false,
      };
      if (signal !== undefined) {
        sleeper.onAbort = () => {
          sleeper.done = true;
          this.#pending--;
          reject(signal.reason);
        };
        signal.addEventListener("abort", sleeper.onAbort, { once: true });
      }
      this.#sleepers.push(sleeper);
      this.#pending++;
    });
  }

  /**
   * Moves time forward by `ms`, firing due sleepers in time order and letting
   * the code they wake run (one macrotask turn per instant) before the next.
   */
  async advance(ms: number): Promise<void> {
    requireDuration("advance ms", ms);
    const target = this.#now + ms;
    while (this.#dropAborted() !== undefined && this.#sleepers.peek()!.deadline <= target) {
      this.#fireEarliest();
      await nextTurn();
    }
    if (target > this.#now) this.#now = target;
  }

  #dropAborted(): Sleeper | undefined {
    let first = this.#sleepers.peek();
    while (first !== undefined && first.done) {
      this.#sleepers.pop();
      first = this.#sleepers.peek();
    }
    return first;
  }

  #fireEarliest(): boolean {
    const first = this.#dropAborted();
    if (first === undefined) return false;
    const deadline = first.deadline;
    if (deadline > this.#now) this.#now = deadline;
    while (this.#sleepers.length > 0 && this.#sleepers.peek()!.deadline === deadline) {
      const sleeper = this.#sleepers.pop()!;
      if (sleeper.done) continue;
      sleeper.done = true;
      this.#pending--;
      if (sleeper.onAbort !== undefined) {
        sleeper.signal!.removeEventListener("abort", sleeper.onAbort);
      }
      sleeper.resolve();
    }
    return true;
  }
}
