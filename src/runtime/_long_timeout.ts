// setTimeout keeps its delay in a signed 32-bit integer: a delay above
// 2^31 - 1 ms (24.8 days) overflows and fires after about 1 ms, so a 30-day
// fork timeout would time out at once. Longer timeouts are chained: a timer
// of at most that much, re-armed from the monotonic clock until the deadline.

/** The longest delay setTimeout takes as given. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The timer functions a long timeout uses; tests pass fake ones. */
type TimerId = ReturnType<typeof setTimeout>;

export interface TimerHost {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
  /** Monotonic milliseconds. */
  now(): number;
}

const realHost: TimerHost = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (id) => clearTimeout(id as TimerId),
  now: () => performance.now(),
};

/** A timeout of any finite length; `cancel` stops it. */
export class LongTimeout {
  #id: unknown;
  readonly #deadline: number;

  constructor(ms: number, readonly callback: () => void, readonly host: TimerHost = realHost) {
    this.#deadline = host.now() + ms;
    this.#id = host.setTimeout(this.#step, Math.min(ms, MAX_TIMEOUT_MS));
  }

  readonly #step = (): void => {
    const left = this.#deadline - this.host.now();
    if (left > 0) this.#id = this.host.setTimeout(this.#step, Math.min(left, MAX_TIMEOUT_MS));
    else this.callback();
  };

  cancel(): void {
    this.host.clearTimeout(this.#id);
  }
}

/** A running timer: a setTimeout id, or a chain for a delay setTimeout cannot hold. */
export type Timeout = TimerId | LongTimeout;

/** setTimeout for any finite `ms`. */
export function startTimeout(callback: () => void, ms: number): Timeout {
  return ms <= MAX_TIMEOUT_MS ? setTimeout(callback, ms) : new LongTimeout(ms, callback);
}

export function stopTimeout(timeout: Timeout): void {
  if (timeout instanceof LongTimeout) timeout.cancel();
  else clearTimeout(timeout);
}
