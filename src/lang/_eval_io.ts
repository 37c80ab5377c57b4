// evalIO: real IO run from a script. The process (and its slot) waits until
// `io` settles. A shielded evalIO runs after the process's cancellation too,
// for cleanup; its signal aborts only at its own timeout, which is real time
// because it bounds real IO (API.md rule 13). While any evalIO is pending, a
// test runtime holds its virtual clock (rule 11): the observer is told when
// one starts and when it settles.
import { requireDuration, requireObject, show } from "../_validate.ts";
import type { RuntimeObserver } from "../runtime/observer.ts";
import type { Cancellation } from "./cancellation.ts";
import type { EvalIOOptions } from "./lang.ts";

/** A shielded evalIO's default bound, in real milliseconds. */
export const SHIELDED_TIMEOUT_MS = 5_000;

/** setTimeout's limit; longer timeouts are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface CheckedIOOptions {
  readonly shielded: boolean;
  /** Real ms after which io's signal aborts; undefined: never. */
  readonly timeoutMs: number | undefined;
}

const PLAIN: CheckedIOOptions = Object.freeze({ shielded: false, timeoutMs: undefined });

export function checkIOOptions(options: EvalIOOptions | undefined): CheckedIOOptions {
  if (options === undefined) return PLAIN;
  requireObject("evalIO options", options);
  const { shielded = false, timeoutMs } = options;
  if (typeof shielded !== "boolean") {
    throw new TypeError(`evalIO options.shielded must be a boolean, got ${show(shielded)}`);
  }
  if (timeoutMs !== undefined) requireDuration("evalIO options.timeoutMs", timeoutMs, true);
  const ms = timeoutMs ?? (shielded ? SHIELDED_TIMEOUT_MS : undefined);
  return { shielded, timeoutMs: ms === Infinity ? undefined : ms };
}

/** A real timer that also waits correctly beyond setTimeout's 2^31 − 1 ms. */
class RealTimeout {
  #id: ReturnType<typeof setTimeout>;
  constructor(ms: number, readonly fire: () => void) {
    this.#id = this.#arm(ms);
  }

  #arm(ms: number): ReturnType<typeof setTimeout> {
    if (ms <= MAX_TIMER_MS) return setTimeout(this.fire, ms);
    return setTimeout(() => this.#id = this.#arm(ms - MAX_TIMER_MS), MAX_TIMER_MS);
  }

  clear(): void {
    clearTimeout(this.#id);
  }
}

/**
 * Runs `io` with the signal the options call for and settles as it does.
 * Cancellation checks are the caller's: a shielded evalIO makes none.
 */
export function runIO<T>(
  lang: Cancellation,
  io: (signal: AbortSignal) => Promise<T>,
  options: CheckedIOOptions,
  observer: RuntimeObserver | undefined,
): Promise<T> {
  const { shielded, timeoutMs } = options;
  if (!shielded && timeoutMs === undefined && observer === undefined) {
    return call(io, lang.signal);
  }
  let signal = lang.signal;
  let timer: RealTimeout | undefined;
  let unlink: (() => void) | undefined;
  if (shielded || timeoutMs !== undefined) {
    const controller = new AbortController();
    signal = controller.signal;
    if (timeoutMs !== undefined) {
      timer = new RealTimeout(timeoutMs, () => {
        const label = shielded ? "a shielded evalIO" : "evalIO";
        controller.abort(
          new DOMException(`${label} timed out after timeoutMs ${timeoutMs}`, "TimeoutError"),
        );
      });
    }
    if (!shielded) unlink = follow(lang.signal, controller);
  }
  observer?.ioStarted();
  return call(io, signal).finally(() => {
    timer?.clear();
    unlink?.();
    observer?.ioEnded();
  });
}

function call<T>(io: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
  try {
    return Promise.resolve(io(signal));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Aborts `controller` when `signal` does; returns how to stop following. */
function follow(signal: AbortSignal, controller: AbortController): () => void {
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => {};
  }
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}
