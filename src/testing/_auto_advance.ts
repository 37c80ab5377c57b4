// The test runtime's scheduler of virtual time (API.md rule 11). After each
// macrotask turn in which nothing ran that procpool can see, it fires the
// clock's earliest sleepers. It never spins: while an evalIO is pending it
// waits for it to end (the clock stands still), and when nothing is due it
// polls rarely, with growing intervals, waking early when a timer is started.
// A program that stays quiet like that for `stuckAfterMs` of real time is
// stuck, and `onStuck` is called.
import { clearImmediate, setImmediate } from "node:timers";
import { outsideScripts } from "../app/_guard.ts";
import { fireEarliest, type VirtualClock, wakeOnNextTimer } from "./virtual_clock.ts";

/** The longest pause between two looks at a quiet program, in real ms. */
const MAX_POLL_MS = 100;

export interface AutoAdvanceHooks {
  /** Changes whenever the program did something procpool can see. */
  fingerprint(): string;
  /** The program was quiet for `stuckAfterMs`. */
  stuck(): void;
  /** A turn passed with nothing due and no evalIO pending. */
  quiet(): void;
}

export class AutoAdvance {
  #apps = 0;
  #io = 0;
  /** Worker scripts are running: virtual time waits for them. */
  #held = false;
  #tick: ReturnType<typeof setImmediate> | undefined = undefined;
  #poll: ReturnType<typeof setTimeout> | undefined = undefined;
  #pollMs = 1;
  #quietSince = 0;
  #fingerprint = "";

  constructor(
    readonly clock: VirtualClock,
    readonly hooks: AutoAdvanceHooks,
    readonly stuckAfterMs: number,
  ) {}

  appStarted(): void {
    this.#apps++;
    this.wake();
  }

  appEnded(): void {
    if (--this.#apps === 0) this.#stop();
  }

  ioStarted(): void {
    this.#io++;
  }

  ioEnded(): void {
    if (--this.#io === 0) this.wake();
  }

  /** Worker scripts run (true) or none does (false); like a pending evalIO, they hold the clock. */
  hold(held: boolean): void {
    this.#held = held;
    if (!held) this.wake();
  }

  /** Something may have become due: look after the next turn. */
  wake(): void {
    if (this.#apps === 0) return;
    if (this.#poll !== undefined) {
      clearTimeout(this.#poll);
      this.#poll = undefined;
    }
    wakeOnNextTimer(this.clock, undefined);
    // A wake can come from inside a script (its delay, its evalIO ending);
    // the loop must not run in the script's context, or a stuck cancel would
    // run the app's abort listeners marked as LangL code.
    this.#tick ??= outsideScripts(() => setImmediate(this.#onTick));
  }

  #stop(): void {
    if (this.#tick !== undefined) clearImmediate(this.#tick);
    if (this.#poll !== undefined) clearTimeout(this.#poll);
    this.#tick = this.#poll = undefined;
    wakeOnNextTimer(this.clock, undefined);
  }

  // A macrotask turn has passed: every microtask (every runnable process and
  // body) has run. Whatever still waits on the clock can only be woken by time.
  readonly #onTick = (): void => {
    this.#tick = undefined;
    // A pending evalIO (or a running worker script) holds the clock; its end wakes the loop.
    if (this.#apps === 0 || this.#io > 0 || this.#held) return;
    if (fireEarliest(this.clock)) {
      this.#tick = setImmediate(this.#onTick);
      return;
    }
    this.hooks.quiet();
    if (this.#apps === 0) return;
    this.#quietSince = performance.now();
    this.#fingerprint = this.hooks.fingerprint();
    this.#pollMs = 1;
    this.#schedulePoll();
  };

  #schedulePoll(): void {
    wakeOnNextTimer(this.clock, () => this.wake());
    this.#poll = setTimeout(this.#onPoll, this.#pollMs);
    this.#pollMs = Math.min(this.#pollMs * 2, MAX_POLL_MS);
  }

  readonly #onPoll = (): void => {
    this.#poll = undefined;
    if (this.#apps === 0 || this.#io > 0 || this.#held) return;
    const fingerprint = this.hooks.fingerprint();
    if (fingerprint !== this.#fingerprint) {
      // Something outside the runtime moved the program on: start over.
      this.wake();
      return;
    }
    if (performance.now() - this.#quietSince >= this.stuckAfterMs) {
      wakeOnNextTimer(this.clock, undefined);
      this.hooks.stuck();
      this.wake();
      return;
    }
    this.#schedulePoll();
  };
}
