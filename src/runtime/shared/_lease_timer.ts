// One re-armable timer on a Clock: the lease manager keeps four (wake, renew,
// deadline, idle), each at most once armed, so nothing piles up or leaks.
import type { Clock } from "../clock.ts";

export class LeaseTimer {
  #controller: AbortController | undefined;

  constructor(readonly clock: Clock, readonly fire: () => void) {}

  get armed(): boolean {
    return this.#controller !== undefined;
  }

  /** Fires `ms` from now, replacing any earlier arming. */
  set(ms: number): void {
    this.clear();
    const controller = new AbortController();
    this.#controller = controller;
    this.clock.sleep(ms, controller.signal).then(() => {
      if (this.#controller !== controller) return;
      this.#controller = undefined;
      this.fire();
    }, () => {});
  }

  clear(): void {
    this.#controller?.abort();
    this.#controller = undefined;
  }
}
