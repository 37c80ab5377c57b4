// What a runtime tells its instruments (OpenTelemetry, the timeline recorder)
// about processes, scopes and the wait for slots. A runtime decides once, when
// it is built, whether anything listens: with nobody listening, `core.hooks`
// is undefined and the hot paths pay one field check per process.
import type { LogLevel } from "./observer.ts";

/** What an instrument may read of a process. */
export interface ProcessView {
  readonly id: number;
  readonly name: string | undefined;
  readonly status: "running" | "succeeded" | "failed" | "cancelled";
  /** Why it did not succeed (a ProcessFailedError or ProcessCancelledError). */
  readonly error: Error | undefined;
}

/** Runs a process's script; the probe may run it in a context of its own. */
export type ScriptCall = (
  record: never,
  fn: never,
  item: unknown,
  withItem: boolean,
) => unknown;

/** One process, as an instrument follows it from its start to its stop. */
export interface ProcessProbe {
  /** Calls `call(record, fn, item, withItem)` and returns what it returns. */
  enter(call: ScriptCall, record: unknown, fn: unknown, item: unknown, withItem: boolean): unknown;
  /** A cancel or a timeout was requested; `reason` is the process's cancellation error. */
  cancelRequested(reason: Error): void;
  /** The process has stopped; its slot is released right after. */
  stopped(process: ProcessView): void;
}

/** A scope or a forkAll batch. */
export type WorkKind = "runApp" | "scope" | "forkAll" | "forkAllSettled";

/** Everything an instrument hears; all calls are synchronous and must not throw. */
export interface PoolHooks {
  /** A process took its slot (`begin`); its script runs at `enter`. */
  processStarted(process: ProcessView): ProcessProbe;
  /** Runs `body` (a scope's or a batch's) and reports how it settled. */
  work<T>(kind: WorkKind, name: string | undefined, body: () => Promise<T>): Promise<T>;
  /** A LangL log call, from inside the script that made it. */
  logged(
    processId: number,
    level: LogLevel,
    message: string,
    properties: Readonly<Record<string, unknown>> | undefined,
  ): void;
  /** A waiter entered the wait for a slot; `key` identifies it until it leaves. */
  waitBegan(key: object): void;
  /**
   * A waiter left the wait: `granted` (its process starts right after, before
   * any other hook call) or withdrawn. `waitedMs` is on the runtime's clock.
   */
  waitEnded(key: object, granted: boolean, waitedMs: number): void;
  /** The pool's counts changed. */
  slotsChanged(active: number, waiting: number): void;
}

/** Runs `body` as a scope's or batch's work, reported to `hooks` if there are any. */
export function withWork<T>(
  hooks: PoolHooks | undefined,
  kind: WorkKind,
  name: string | undefined,
  body: () => Promise<T>,
): Promise<T> {
  return hooks === undefined ? body() : hooks.work(kind, name, body);
}

function combinedProbe(a: ProcessProbe, b: ProcessProbe): ProcessProbe {
  return {
    // Only the first may wrap the script: the recorder's probe calls straight through.
    enter: (call, record, fn, item, withItem) => a.enter(call, record, fn, item, withItem),
    cancelRequested(reason) {
      a.cancelRequested(reason);
      b.cancelRequested(reason);
    },
    stopped(process) {
      a.stopped(process);
      b.stopped(process);
    },
  };
}

/** Both instruments, or the one there is, or none. `a` is the one that may wrap scripts. */
export function combineHooks(
  a: PoolHooks | undefined,
  b: PoolHooks | undefined,
): PoolHooks | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return {
    processStarted: (process) =>
      combinedProbe(a.processStarted(process), b.processStarted(process)),
    work: (kind, name, body) => a.work(kind, name, () => b.work(kind, name, body)),
    logged(processId, level, message, properties) {
      a.logged(processId, level, message, properties);
      b.logged(processId, level, message, properties);
    },
    waitBegan(key) {
      a.waitBegan(key);
      b.waitBegan(key);
    },
    waitEnded(key, granted, waitedMs) {
      a.waitEnded(key, granted, waitedMs);
      b.waitEnded(key, granted, waitedMs);
    },
    slotsChanged(active, waiting) {
      a.slotsChanged(active, waiting);
      b.slotsChanged(active, waiting);
    },
  };
}
