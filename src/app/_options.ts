// Validation of the option bags AppL accepts, done once at the boundary.
import {
  received,
  requireDuration,
  requireFunction,
  requireObject,
  requireSafeInteger,
  requireSignal,
} from "../_validate.ts";
import type { AwaitOptions, ForkOptions, ScopeOptions } from "./app.ts";
import type { FailureHandler } from "./_failures.ts";

export interface CheckedForkOptions {
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number | undefined;
  readonly name: string | undefined;
  /** 0 unless given: the pool's default line. */
  readonly priority: number;
}

/** What `checkForkOptions` returns for no options at all. */
export const NO_FORK_OPTIONS: CheckedForkOptions = Object.freeze({
  signal: undefined,
  timeoutMs: undefined,
  name: undefined,
  priority: 0,
});

export function checkForkOptions(op: string, options: ForkOptions | undefined): CheckedForkOptions {
  if (options === undefined) return NO_FORK_OPTIONS;
  requireObject(`${op} options`, options);
  const { signal, timeoutMs, name, priority = 0 } = options;
  if (signal !== undefined) requireSignal(`${op} options.signal`, signal);
  if (timeoutMs !== undefined) requireDuration(`${op} options.timeoutMs`, timeoutMs, true);
  if (name !== undefined && typeof name !== "string") {
    throw new TypeError(`${op} options.name must be a string, got ${received(name)}`);
  }
  requireSafeInteger(`${op} options.priority`, priority);
  return { signal, timeoutMs: timeoutMs === Infinity ? undefined : timeoutMs, name, priority };
}

const NO_AWAIT_OPTIONS: AwaitOptions = Object.freeze({});

export function checkAwaitOptions(options: AwaitOptions | undefined): AwaitOptions {
  if (options === undefined) return NO_AWAIT_OPTIONS;
  requireObject("awaitResult options", options);
  const { signal, timeoutMs } = options;
  if (signal !== undefined) requireSignal("awaitResult options.signal", signal);
  if (timeoutMs !== undefined) requireDuration("awaitResult options.timeoutMs", timeoutMs, true);
  return { signal, timeoutMs: timeoutMs === Infinity ? undefined : timeoutMs };
}

export interface CheckedScopeOptions {
  readonly failFast: boolean;
  readonly onFailure: FailureHandler | undefined;
}

const NO_SCOPE_OPTIONS: CheckedScopeOptions = Object.freeze({
  failFast: false,
  onFailure: undefined,
});

export function checkScopeOptions(
  op: string,
  options: ScopeOptions | undefined,
): CheckedScopeOptions {
  if (options === undefined) return NO_SCOPE_OPTIONS;
  requireObject(`${op} options`, options);
  const { failFast = false, onFailure } = options;
  if (typeof failFast !== "boolean") {
    throw new TypeError(`${op} options.failFast must be a boolean, got ${received(failFast)}`);
  }
  if (onFailure !== undefined) requireFunction(`${op} options.onFailure`, onFailure);
  return { failFast, onFailure };
}
