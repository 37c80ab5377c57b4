// Sleeps of a fraction of a millisecond that neither spin nor round up, for
// bench:fleet's short holds. On Deno 2.9.6 a `setTimeout` of 0–1 ms fires
// after about 2.2 ms even in an idle process, and polling `setImmediate` until
// the deadline keeps a core busy for the whole hold: with 4 processes on 2
// cores, the more of the capacity a limiter keeps busy, the more its processes
// spin and the later their holds end, which penalises the better limiter.
// Here a thread sleeps in the kernel until the earliest deadline and wakes the
// waiting hold through Atomics.waitAsync, so a hold costs no CPU while it lasts.

import { setImmediate } from "node:timers";

/** The shared tables, as posted to the thread. */
export interface HoldTimerTables {
  /** Int32 per slot: the deadline in µs after `base`, or FREE. */
  deadlines: SharedArrayBuffer;
  /** Int32 per slot: 1 once its deadline has passed (the main thread waits on it). */
  done: SharedArrayBuffer;
  /** Int32 × 3, indexed by CONTROL. */
  control: SharedArrayBuffer;
  /** The main thread's performance.timeOrigin, and `base` on its performance.now() scale (ms). */
  timeOrigin: number;
  base: number;
  /** The thread wakes at least this often (a safety net: it is told of every earlier deadline). */
  maxWaitUs: number;
}

export const CONTROL = {
  /** Bumped (and notified) when a deadline earlier than the thread's sleep is added. */
  sequence: 0,
  /** The deadline the thread sleeps until, or SCANNING while it reads the table. */
  sleepingUntil: 1,
  /** 1 asks the thread to stop. */
  stop: 2,
} as const;
export const FREE = 0;
export const SCANNING = 0;

/**
 * A timer thread with `slots` holds at most at once; deadlines up to ~35
 * minutes after it starts. It wakes by itself at least every `maxWaitMs`.
 */
export class HoldTimer {
  readonly #worker: Worker;
  readonly #deadlines: Int32Array;
  readonly #done: Int32Array;
  readonly #control: Int32Array;
  readonly #base = performance.now();
  readonly #free: number[];

  constructor(slots = 1024, maxWaitMs = 100) {
    const tables: HoldTimerTables = {
      deadlines: new SharedArrayBuffer(slots * 4),
      done: new SharedArrayBuffer(slots * 4),
      control: new SharedArrayBuffer(3 * 4),
      timeOrigin: performance.timeOrigin,
      base: this.#base,
      maxWaitUs: maxWaitMs * 1000,
    };
    this.#deadlines = new Int32Array(tables.deadlines);
    this.#done = new Int32Array(tables.done);
    this.#control = new Int32Array(tables.control);
    this.#free = Array.from({ length: slots }, (_, slot) => slots - 1 - slot);
    this.#worker = new Worker(new URL("./_hold_timer_thread.ts", import.meta.url), {
      type: "module",
    });
    this.#worker.postMessage(tables);
  }

  /** Resolves `ms` after the call (never before), plus the thread's wake-up (about 0.1 ms). */
  async hold(ms: number): Promise<void> {
    const slot = this.#free.pop();
    if (slot === undefined) throw new Error("HoldTimer: every slot is in use");
    const until = performance.now() + Math.max(0, ms);
    try {
      // At least 1 µs after base, so that a deadline is never FREE.
      const deadline = Math.max(1, Math.ceil((until - this.#base) * 1000));
      Atomics.store(this.#done, slot, 0);
      Atomics.store(this.#deadlines, slot, deadline);
      // The thread wakes by itself at its own deadline and rescans then, so it
      // needs telling only of an earlier one, or of any while it scans.
      const sleeping = Atomics.load(this.#control, CONTROL.sleepingUntil);
      if (sleeping === SCANNING || deadline < sleeping) {
        Atomics.add(this.#control, CONTROL.sequence, 1);
        Atomics.notify(this.#control, CONTROL.sequence);
      }
      const wait = Atomics.waitAsync(this.#done, slot, 0);
      if (wait.async) await wait.value;
    } finally {
      this.#free.push(slot);
    }
    // The thread's clock agrees with this one to about a µs, and its deadlines
    // are whole µs: this thread's clock has the last word.
    await pollUntil(until);
  }

  /** Stops the thread; holds still pending never resolve. */
  close(): void {
    Atomics.store(this.#control, CONTROL.stop, 1);
    Atomics.add(this.#control, CONTROL.sequence, 1);
    Atomics.notify(this.#control, CONTROL.sequence);
    this.#worker.terminate();
  }
}

/** Yields to the event loop (setImmediate) until `performance.now()` reaches `until`. */
export async function pollUntil(until: number): Promise<void> {
  while (performance.now() < until) await new Promise((resolve) => setImmediate(resolve));
}
