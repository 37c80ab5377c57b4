/**
 * What a runtime can report about the LangL operations it interprets. The
 * test runtime records both streams; a production runtime reports nothing.
 *
 * @module
 */

/**
 * The LangL log levels, as recorded in {@linkcode LogEntry.level}.
 *
 * @example
 * ```ts
 * import type { LogLevel } from "@procpool/procpool/testing";
 * const levels: LogLevel[] = ["debug", "info", "warning", "error"];
 * ```
 */
export type LogLevel = "debug" | "info" | "warning" | "error";

/**
 * One LangL log call, as recorded by the test runtime.
 *
 * @example
 * ```ts
 * import type { LogEntry } from "@procpool/procpool/testing";
 * const entry: LogEntry = { processId: 1, level: "info", message: "hello", properties: {}, time: 0 };
 * console.assert(entry.level === "info");
 * ```
 */
export interface LogEntry {
  /** The process that logged (0 for `evalLang`). */
  readonly processId: number;
  /** The process's name, if it was forked with one. */
  readonly processName?: string;
  /** The level of the call. */
  readonly level: LogLevel;
  /** The message as given. */
  readonly message: string;
  /** The properties as given. */
  readonly properties: Readonly<Record<string, unknown>>;
  /** The runtime clock's time of the call. */
  readonly time: number;
}

/**
 * One LangL operation, as recorded by the test runtime.
 *
 * @example
 * ```ts
 * import type { TraceEvent } from "@procpool/procpool/testing";
 * const event: TraceEvent = { processId: 2, op: "delay", time: 10 };
 * console.assert(event.op === "delay");
 * ```
 */
export interface TraceEvent {
  /** The process that ran the operation (0 for `evalLang`). */
  readonly processId: number;
  /** The LangL method's name, such as `"delay"` or `"modifyVar"`. */
  readonly op: string;
  /** The runtime clock's time when the operation was entered. */
  readonly time: number;
}

/** Receives LangL activity; internal. */
export interface RuntimeObserver {
  log(entry: LogEntry): void;
  /** Positional, so that recording an operation allocates nothing. */
  trace(processId: number, op: string, time: number): void;
  /**
   * Worker scripts run (true) or none does (false): virtual time must not
   * pass while one runs. Given, worker scripts also run one at a time.
   */
  holdClock?(held: boolean): void;
  /** An evalIO started; the virtual clock holds until every one has ended. */
  ioStarted(): void;
  /** An evalIO's io settled. */
  ioEnded(): void;
}
