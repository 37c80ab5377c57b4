// How a "thread" worker serves its ring: it runs what the ring holds, and
// with nothing left to run waits for more blocked (Atomics.wait) for a while
// before it goes back to its event loop.
import { setImmediate } from "node:timers";
import type { FrameRing } from "./_ring.ts";

/**
 * How long a worker whose run ended waits for the next frame blocked
 * (Atomics.wait) rather than in its event loop: waking a thread blocked so
 * costs the runtime and the worker a few µs, waking an event loop tens. A
 * script's leftovers (a timer it did not await) wait that long at most.
 */
export const BLOCKED_WAIT_MS = 2;

/** The worker as `serve` sees it. */
export interface Served {
  /** Reads and runs what the ring holds. */
  drain(): void;
  /** Sends what the runs queued. */
  flush(): void;
  /** The last run ended: nothing to do until the runtime sends more. */
  readonly waiting: boolean;
  /** Batches that came as messages so far. */
  readonly received: number;
}

/**
 * Runs what the ring holds; then, with nothing left to run, waits blocked for
 * more, for `ms` in all. It does not wait while a batch sent as a message has
 * not come (it comes through the event loop), and once it has served for `ms`
 * it lets the event loop turn (a timer a script left behind fires, a message
 * comes) before it resolves, even while frames keep coming.
 */
export async function serve(
  ring: FrameRing,
  served: Served,
  ms: number = BLOCKED_WAIT_MS,
): Promise<void> {
  const until = performance.now() + ms;
  for (;;) {
    const seen = ring.bell;
    served.drain();
    // What a synchronous script queued before it returned runs before its
    // result goes (the run ends one microtask after the script returns).
    await null;
    // The result of a run that ended now goes at once, not after the wait.
    served.flush();
    const left = until - performance.now();
    if (left <= 0) break;
    if (!served.waiting || ring.posted !== served.received) return;
    if (!ring.waitSync(seen, left) || !ring.pending) return;
  }
  await new Promise((resolve) => setImmediate(resolve));
}
