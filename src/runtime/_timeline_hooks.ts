// What a TimelineRecorder hears from one runtime, turned into trace events.
// Slots are anonymous in the pool; the recorder numbers them itself: a
// process takes the most recently freed track number, or a new one.
import type { Clock } from "./clock.ts";
import type { LogLevel } from "./observer.ts";
import type { PoolHooks, ProcessProbe, ProcessView, ScriptCall, WorkKind } from "./_hooks.ts";
import type { ChromeTraceEvent } from "./timeline.ts";

/** A trace event as the ring keeps it. */
export type RecordedEvent = ChromeTraceEvent;

const QUEUE_TRACK = 0;

class TimelineProcess implements ProcessProbe {
  constructor(
    readonly hooks: TimelineHooks,
    readonly tid: number,
    readonly name: string,
  ) {}

  enter(call: ScriptCall, record: unknown, fn: unknown, item: unknown, withItem: boolean): unknown {
    return call(record as never, fn as never, item, withItem);
  }

  cancelRequested(reason: Error): void {
    const cause = (reason as Error & { cause?: unknown }).cause;
    const timeout = reason.name === "ProcessTimeoutError";
    this.hooks.instant(this.tid, timeout ? "timeout" : "cancel", {
      reason: describe(cause === undefined || timeout ? reason : cause),
    });
  }

  stopped(process: ProcessView): void {
    const hooks = this.hooks;
    if (process.status === "failed") {
      const cause = (process.error as Error & { cause?: unknown }).cause;
      hooks.instant(this.tid, "failed", { error: describe(cause) });
    }
    hooks.emit({
      name: this.name,
      ph: "E",
      ts: hooks.nowMicros(),
      pid: hooks.pid,
      tid: this.tid,
      cat: "procpool.process",
      args: { outcome: process.status },
    });
    hooks.freeTrack(this.tid, process.id);
  }
}

function describe(value: unknown): string {
  return value instanceof Error ? `${value.name}: ${value.message}` : String(value);
}

export class TimelineHooks implements PoolHooks {
  readonly #freeTracks: number[] = [];
  #tracks = 0;
  readonly #byProcess = new Map<number, number>();
  #grantWaitMs = 0;
  readonly #waitIds = new WeakMap<object, number>();
  #nextId = 1;
  #active = -1;
  #waiting = -1;

  constructor(
    readonly pid: number,
    readonly maxProcesses: number,
    readonly clock: Clock,
    readonly emit: (event: RecordedEvent) => void,
  ) {
    this.slotsChanged(0, 0);
  }

  nowMicros(): number {
    return this.clock.now() * 1000;
  }

  /** The names of the runtime and of every slot track used so far. */
  metadata(): ChromeTraceEvent[] {
    const meta = (tid: number, name: string, args: Record<string, unknown>) => ({
      name,
      ph: "M" as const,
      ts: 0,
      pid: this.pid,
      tid,
      args,
    });
    const events = [
      meta(QUEUE_TRACK, "process_name", {
        name: `procpool runtime ${this.pid} (maxProcesses ${this.maxProcesses})`,
      }),
      meta(QUEUE_TRACK, "thread_name", { name: "runtime" }),
    ];
    for (let tid = 1; tid <= this.#tracks; tid++) {
      events.push(meta(tid, "thread_name", { name: `slot ${tid}` }));
      events.push(meta(tid, "thread_sort_index", { sort_index: tid }));
    }
    return events;
  }

  instant(tid: number, name: string, args: Record<string, unknown>): void {
    this.emit({
      name,
      ph: "i",
      s: tid === QUEUE_TRACK ? "p" : "t",
      ts: this.nowMicros(),
      pid: this.pid,
      tid,
      cat: "procpool.event",
      args,
    });
  }

  freeTrack(tid: number, processId: number): void {
    this.#byProcess.delete(processId);
    this.#freeTracks.push(tid);
  }

  processStarted(process: ProcessView): ProcessProbe {
    const tid = this.#freeTracks.pop() ?? ++this.#tracks;
    const name = process.name ?? `process ${process.id}`;
    this.#byProcess.set(process.id, tid);
    const args: Record<string, unknown> = { id: process.id, waitedMs: this.#grantWaitMs };
    this.#grantWaitMs = 0;
    this.emit({
      name,
      ph: "B",
      ts: this.nowMicros(),
      pid: this.pid,
      tid,
      cat: "procpool.process",
      args,
    });
    return new TimelineProcess(this, tid, name);
  }

  work<T>(kind: WorkKind, name: string | undefined, body: () => Promise<T>): Promise<T> {
    const id = this.#nextId++;
    const label = name === undefined ? kind : `${kind} ${name}`;
    const slice = (ph: "b" | "e", args?: Record<string, unknown>) =>
      this.emit({
        name: label,
        ph,
        ts: this.nowMicros(),
        pid: this.pid,
        tid: QUEUE_TRACK,
        cat: "procpool.scope",
        id,
        ...(args === undefined ? {} : { args }),
      });
    slice("b");
    const running = body();
    running.then(
      () => slice("e", { outcome: "returned" }),
      (error) => slice("e", { outcome: "threw", error: describe(error) }),
    );
    return running;
  }

  logged(
    processId: number,
    level: LogLevel,
    message: string,
    properties: Readonly<Record<string, unknown>> | undefined,
  ): void {
    const tid = this.#byProcess.get(processId) ?? QUEUE_TRACK;
    const args: Record<string, unknown> = { message };
    for (const key in properties) {
      const value = properties[key];
      // Kept as JSON can show them: an Error would become `{}`.
      args[key] = value instanceof Error ? describe(value) : value;
    }
    this.instant(tid, `log ${level}`, args);
  }

  waitBegan(key: object): void {
    const id = this.#nextId++;
    this.#waitIds.set(key, id);
    this.#wait("b", id);
  }

  waitEnded(key: object, granted: boolean, waitedMs: number): void {
    const id = this.#waitIds.get(key);
    if (id === undefined) return;
    this.#waitIds.delete(key);
    if (granted) this.#grantWaitMs = waitedMs;
    this.#wait("e", id, { outcome: granted ? "granted" : "withdrawn" });
  }

  slotsChanged(active: number, waiting: number): void {
    const ts = this.nowMicros();
    if (active !== this.#active) {
      this.#active = active;
      this.#counter("active", ts, { active });
    }
    if (waiting !== this.#waiting) {
      this.#waiting = waiting;
      this.#counter("waiting", ts, { waiting });
    }
  }

  #counter(name: string, ts: number, args: Record<string, number>): void {
    this.emit({ name, ph: "C", ts, pid: this.pid, tid: QUEUE_TRACK, args });
  }

  #wait(ph: "b" | "e", id: number, args?: Record<string, unknown>): void {
    this.emit({
      name: "waiting for a slot",
      ph,
      ts: this.nowMicros(),
      pid: this.pid,
      tid: QUEUE_TRACK,
      cat: "procpool.wait",
      id,
      ...(args === undefined ? {} : { args }),
    });
  }
}
