/**
 * How a fork waits when the pool is full.
 *
 * @module
 */
import { requireDuration, requireNumber, requireObject, show } from "../_validate.ts";

/**
 * A wait policy: {@linkcode fifo} (the default) or {@linkcode backoff}. Pass
 * one as `RuntimeOptions.wait`.
 *
 * @example
 * ```ts
 * import { backoff, fifo } from "@procpool/procpool";
 * console.assert(fifo().kind === "fifo" && backoff().kind === "backoff");
 * ```
 */
export interface WaitPolicy {
  /** Which policy this is. */
  readonly kind: "fifo" | "backoff";
}

/**
 * The settings of {@linkcode backoff}; every field is optional.
 *
 * @example
 * ```ts
 * import { backoff, type BackoffOptions } from "@procpool/procpool";
 * const gentle: BackoffOptions = { initialMs: 10, factor: 1.5, maxMs: 500, jitter: 0.2 };
 * console.assert(backoff(gentle).kind === "backoff");
 * ```
 */
export interface BackoffOptions {
  /** The first sleep, in ms. Default 1. */
  initialMs?: number;
  /** Each retry multiplies the sleep by this. Default 2. */
  factor?: number;
  /** The longest sleep, in ms. Default 1000. */
  maxMs?: number;
  /** Random spread, as a fraction: 0.5 means up to ±50 %. Default 0.5. */
  jitter?: number;
}

/** The internal, validated form of a backoff policy. */
export interface BackoffPolicy extends WaitPolicy {
  readonly kind: "backoff";
  readonly initialMs: number;
  readonly factor: number;
  readonly maxMs: number;
  readonly jitter: number;
}

const FIFO: WaitPolicy = Object.freeze({ kind: "fifo" as const });

/** Policies made by fifo() and backoff(): only these are validated. */
const madeHere = new WeakSet<object>([FIFO]);

/** Whether `value` was made by {@linkcode fifo} or {@linkcode backoff}. Internal. */
export function isWaitPolicy(value: unknown): value is WaitPolicy {
  return typeof value === "object" && value !== null && madeHere.has(value);
}

/**
 * First come, first served: a freed slot is handed at once to the longest
 * waiter. No timers, no polling. The default.
 *
 * @example
 * ```ts
 * import { Runtime, fifo } from "@procpool/procpool";
 * await using runtime = new Runtime({ maxProcesses: 2, wait: fifo() });
 * console.assert(runtime.maxProcesses === 2);
 * ```
 */
export function fifo(): WaitPolicy {
  return FIFO;
}

/**
 * The book's loop: try for a slot; if the pool is full, sleep on the runtime's
 * clock for `min(maxMs, initialMs * factor^k)`, jittered by up to ±`jitter`
 * from the runtime's random source, then try again. Waiters are not ordered and
 * a newcomer can take a slot first; use it where a slot can be freed by another
 * machine (no hand-off possible) or where the book's behaviour is wanted.
 *
 * @example
 * ```ts
 * import { Runtime, backoff } from "@procpool/procpool";
 * await using runtime = new Runtime({ maxProcesses: 1, wait: backoff({ initialMs: 5, maxMs: 50 }) });
 * console.assert(runtime.stats().max === 1);
 * ```
 */
export function backoff(options: BackoffOptions = {}): WaitPolicy {
  requireObject("backoff options", options);
  const { initialMs = 1, factor = 2, maxMs = 1000, jitter = 0.5 } = options;
  requireDuration("backoff initialMs", initialMs);
  // A first sleep of 0 never grows (0 · factor^k) and, on a virtual clock,
  // retries at one instant forever without letting time move.
  if (initialMs === 0) {
    throw new RangeError("backoff initialMs must be greater than 0, got 0");
  }
  requireDuration("backoff maxMs", maxMs);
  requireNumber("backoff factor", factor);
  requireNumber("backoff jitter", jitter);
  if (!(factor >= 1) || factor === Infinity) {
    throw new RangeError(`backoff factor must be a finite number >= 1, got ${show(factor)}`);
  }
  if (!(jitter >= 0 && jitter <= 1)) {
    throw new RangeError(`backoff jitter must be between 0 and 1, got ${show(jitter)}`);
  }
  if (maxMs < initialMs) {
    throw new RangeError(`backoff maxMs (${maxMs}) must not be less than initialMs (${initialMs})`);
  }
  const policy: BackoffPolicy = Object.freeze({
    kind: "backoff",
    initialMs,
    factor,
    maxMs,
    jitter,
  });
  madeHere.add(policy);
  return policy;
}
