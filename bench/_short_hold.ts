// How a bench:fleet job holds its slot. On Deno 2.9.6 a `setTimeout` of 0–1
// ms fires after about 2.2 ms even in an idle process, so holds asked as 0–1
// ms cannot use it; holds of SHORT_BELOW_MS and more always do.
import { HoldTimer, pollUntil } from "./_hold_timer.ts";

/**
 * Holds shorter than SHORT_BELOW_MS: `thread` sleeps on a timer thread
 * (_hold_timer.ts, no CPU while it lasts); `poll` polls `setImmediate` until
 * the deadline (a core busy for the whole hold); `timeout` uses `setTimeout`
 * (holds of about 2.2 ms whatever is asked).
 */
export const SHORT_HOLDS = ["thread", "poll", "timeout"] as const;
export type ShortHold = typeof SHORT_HOLDS[number];

/** Holds asked this long or longer use `setTimeout`, whatever the ShortHold. */
export const SHORT_BELOW_MS = 2;

let timer: HoldTimer | undefined;

/** Holds for `ms`; `short` says how when `ms` is below SHORT_BELOW_MS. */
export async function holdFor(ms: number, short: ShortHold): Promise<void> {
  if (ms >= SHORT_BELOW_MS || short === "timeout") {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
  } else if (short === "thread") {
    await (timer ??= new HoldTimer()).hold(ms);
  } else {
    await pollUntil(performance.now() + ms);
  }
}

/** Stops the timer thread, if one was started (the process could not end otherwise). */
export function closeHolds(): void {
  timer?.close();
  timer = undefined;
}
