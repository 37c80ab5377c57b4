/**
 * A timeline of what a runtime did, as Chrome trace-event JSON: the format
 * that Perfetto (ui.perfetto.dev) and `chrome://tracing` open.
 *
 * @module
 */
import { requireObject, requirePositiveInteger } from "../_validate.ts";
import type { Clock } from "./clock.ts";
import { type RecordedEvent, TimelineHooks } from "./_timeline_hooks.ts";

/**
 * One trace event, in the Chrome trace-event format: `ph` is the phase
 * (`B`/`E` a slice on a slot's track, `b`/`e` an async slice, `C` a counter,
 * `i` an instant, `M` metadata), `ts` microseconds on the runtime's clock.
 *
 * @example
 * ```ts
 * import type { ChromeTraceEvent } from "@procpool/procpool";
 * const event: ChromeTraceEvent = { name: "active", ph: "C", ts: 0, pid: 1, tid: 0, args: { active: 1 } };
 * ```
 */
export interface ChromeTraceEvent {
  /** The slice's, counter's or instant's name. */
  readonly name: string;
  /** The phase: `B`, `E`, `b`, `e`, `C`, `i` or `M`. */
  readonly ph: "B" | "E" | "b" | "e" | "C" | "i" | "M";
  /** Microseconds on the runtime's clock (virtual on a test runtime). */
  readonly ts: number;
  /** The runtime (1 for the first runtime the recorder was given to). */
  readonly pid: number;
  /** The track: 0 for the runtime's own, `n` for slot `n`. */
  readonly tid: number;
  /** The category: `procpool.process`, `procpool.wait`, `procpool.scope`, ... */
  readonly cat?: string;
  /** Pairs `b` with `e` (async slices). */
  readonly id?: number;
  /** An instant's scope: `t` (its track) or `p` (the runtime). */
  readonly s?: "t" | "p";
  /** What the event carries (a counter's value, a process's id and outcome). */
  readonly args?: Readonly<Record<string, unknown>>;
}

/**
 * A trace file: what {@linkcode TimelineRecorder.toJSON} returns and
 * `JSON.stringify` writes.
 *
 * @example
 * ```ts
 * import type { ChromeTrace } from "@procpool/procpool";
 * const empty: ChromeTrace = { traceEvents: [], displayTimeUnit: "ms", otherData: { dropped: 0 } };
 * ```
 */
export interface ChromeTrace {
  /** The events, metadata first, then in the order they happened. */
  readonly traceEvents: readonly ChromeTraceEvent[];
  /** How the viewer shows time. */
  readonly displayTimeUnit: "ms";
  /** `dropped`: events the ring let go to stay within its capacity. */
  readonly otherData: { readonly dropped: number };
}

/**
 * Options for {@linkcode TimelineRecorder}.
 *
 * @example
 * ```ts
 * import type { TimelineOptions } from "@procpool/procpool";
 * const options: TimelineOptions = { capacity: 10_000 };
 * ```
 */
export interface TimelineOptions {
  /** How many events to keep: the last ones win. A positive integer; default 100 000. */
  capacity?: number;
}

let attach: (recorder: TimelineRecorder, clock: Clock, maxProcesses: number) => TimelineHooks;

/** Starts recording a runtime; internal (RuntimeOptions.recorder). */
export function attachRecorder(
  recorder: TimelineRecorder,
  clock: Clock,
  maxProcesses: number,
): TimelineHooks {
  return attach(recorder, clock, maxProcesses);
}

/**
 * Records what runtimes do, for Perfetto: one track per slot with a slice
 * per process, the wait for slots as async slices, counter tracks for
 * `active` and `waiting`, instants for logs, cancels and failures, scopes
 * and forkAll batches as async slices. Memory is bounded: a ring of the last
 * `capacity` events. Give it to a runtime with `RuntimeOptions.recorder`;
 * write `JSON.stringify(recorder)` to a file and open it in ui.perfetto.dev.
 *
 * @example
 * ```ts
 * import { TimelineRecorder } from "@procpool/procpool";
 * import { createTestRuntime } from "@procpool/procpool/testing";
 * const recorder = new TimelineRecorder({ capacity: 1_000 });
 * await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1, recorder });
 * await runtime.runApp((app) => app.forkAll([1, 2, 3], (n, lang) => lang.delay(n * 1_000)));
 * const slices = recorder.toJSON().traceEvents.filter((event) => event.ph === "B");
 * console.assert(slices.length === 3);
 * ```
 */
export class TimelineRecorder {
  readonly #capacity: number;
  readonly #ring: RecordedEvent[] = [];
  /** Where the oldest event is, once the ring is full. */
  #head = 0;
  #dropped = 0;
  readonly #runtimes: TimelineHooks[] = [];

  /** Creates a recorder; throws TypeError or RangeError for bad options. */
  constructor(options: TimelineOptions = {}) {
    requireObject("TimelineRecorder options", options);
    const { capacity = 100_000 } = options;
    requirePositiveInteger("capacity", capacity);
    this.#capacity = capacity;
  }

  /** Events let go so far to stay within the capacity. */
  get dropped(): number {
    return this.#dropped;
  }

  /** The trace so far; slices still open end at their runtime's clock's now. */
  toJSON(): ChromeTrace {
    const ring = this.#ring;
    const ordered = ring.length < this.#capacity
      ? ring.slice()
      : [...ring.slice(this.#head), ...ring.slice(0, this.#head)];
    const metadata = this.#runtimes.flatMap((runtime) => runtime.metadata());
    return {
      traceEvents: [...metadata, ...balance(ordered, this.#runtimes)],
      displayTimeUnit: "ms",
      otherData: { dropped: this.#dropped },
    };
  }

  static {
    attach = (recorder, clock, maxProcesses) => recorder.#attach(clock, maxProcesses);
  }

  #attach(clock: Clock, maxProcesses: number): TimelineHooks {
    const hooks = new TimelineHooks(
      this.#runtimes.length + 1,
      maxProcesses,
      clock,
      (event) => this.#push(event),
    );
    this.#runtimes.push(hooks);
    return hooks;
  }

  #push(event: RecordedEvent): void {
    const ring = this.#ring;
    if (ring.length < this.#capacity) {
      ring.push(event);
      return;
    }
    ring[this.#head] = event;
    this.#head = (this.#head + 1) % this.#capacity;
    this.#dropped++;
  }
}

/**
 * Keeps the begin/end pairs whole: an end whose begin the ring let go is
 * left out, and a slice still open (a process still running, or one whose
 * end is yet to come) ends at its runtime's clock's now.
 */
function balance(
  events: readonly RecordedEvent[],
  runtimes: readonly TimelineHooks[],
): ChromeTraceEvent[] {
  const open = new Map<string, RecordedEvent[]>();
  const out: ChromeTraceEvent[] = [];
  for (const event of events) {
    const { ph } = event;
    if (ph === "B" || ph === "b") {
      const key = trackKey(event);
      const stack = open.get(key);
      if (stack === undefined) open.set(key, [event]);
      else stack.push(event);
    } else if (ph === "E" || ph === "e") {
      const stack = open.get(trackKey(event));
      if (stack === undefined || stack.length === 0) continue;
      stack.pop();
    }
    out.push(event);
  }
  for (const stack of open.values()) {
    for (let i = stack.length - 1; i >= 0; i--) {
      const begin = stack[i];
      const now = runtimes[begin.pid - 1].nowMicros();
      out.push({
        ...begin,
        ph: begin.ph === "B" ? "E" : "e",
        ts: Math.max(now, lastTs(out, begin)),
        args: { unfinished: true },
      });
    }
  }
  return out;
}

function trackKey(event: RecordedEvent): string {
  return event.ph === "B" || event.ph === "E"
    ? `${event.pid}:${event.tid}`
    : `${event.pid}:${event.cat}:${event.id}`;
}

/** The latest time on `begin`'s track, so that an added end never goes back in time. */
function lastTs(events: readonly ChromeTraceEvent[], begin: RecordedEvent): number {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event.pid === begin.pid && event.tid === begin.tid) return event.ts;
  }
  return begin.ts;
}
