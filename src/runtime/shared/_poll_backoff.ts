// When a waiting runtime asks the store again on its own: the fallback for a
// lost notice or an unreachable store (S3), and the wake for an expiry, which
// publishes nothing (S2). Capped exponential backoff, jittered.

/** How long after the earliest lease deadline a waiter tries again (S2: within leaseMs + 250). */
const EXPIRY_MARGIN_MS = 20;

/**
 * A delay, and how much later the poll may still come: up to the top of its
 * jitter range, so that a timer already running for a poll of the same range
 * can serve instead of a new one.
 */
export interface PollDelay {
  readonly ms: number;
  readonly slackMs: number;
}

export class PollBackoff {
  #attempt = 0;

  constructor(readonly minMs: number, readonly maxMs: number, readonly random: () => number) {}

  /** Progress was made: the next wait starts from `minMs` again. */
  reset(): void {
    this.#attempt = 0;
  }

  /**
   * The next delay, in [cap/2, cap) with cap = min(maxMs, minMs × 2^attempts),
   * and no later than `earliestMs` (the earliest lease deadline; -1: none) +
   * a margin.
   */
  next(earliestMs: number): PollDelay {
    const cap = Math.min(this.maxMs, this.minMs * 2 ** Math.min(30, this.#attempt++));
    const delay = cap * (0.5 + this.random() / 2);
    const expiry = earliestMs >= 0 ? earliestMs + EXPIRY_MARGIN_MS : Infinity;
    // The slack never reaches past the expiry wake (S2: its lease is taken within leaseMs + 250 ms).
    return expiry <= delay
      ? { ms: expiry, slackMs: 0 }
      : { ms: delay, slackMs: Math.min(cap, expiry) - delay };
  }
}
