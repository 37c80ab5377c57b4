// The local deadlines of the leases one runtime holds (S2), behind one timer
// armed for the earliest. HeldLeases (_held_leases.ts) owns one; it moves the
// deadlines (a renewal answered) and decides what losing a lease means.
import type { Clock } from "../clock.ts";
import type { LeaseEntry } from "./_lease_entry.ts";
import { LeaseTimer } from "./_lease_timer.ts";
import type { Fence } from "./lease_store.ts";

export class LeaseDeadlines {
  /** When the timer fires, while it is armed. */
  #at = Infinity;
  readonly #timer: LeaseTimer;

  constructor(
    readonly clock: Clock,
    /** The leases held, each with its deadline. */
    readonly entries: ReadonlyMap<Fence, LeaseEntry>,
    /** A lease's deadline has passed. */
    readonly lose: (entry: LeaseEntry) => void,
  ) {
    this.#timer = new LeaseTimer(clock, () => this.expire());
  }

  /** Whether the earliest deadline has passed (its timer may not have fired yet). */
  get due(): boolean {
    return this.clock.now() >= this.#at;
  }

  /** A lease joined with `deadline`. */
  added(deadline: number): void {
    // A timer due no later serves: firing early, it re-arms for the earliest.
    // (Re-arming costs a hand-over tens of µs, and a batch of grants O(n²).)
    if (!this.#timer.armed || deadline < this.#at) this.arm();
  }

  /** Arms the timer for the earliest deadline (after deadlines moved or leases went). */
  arm(): void {
    let earliest = Infinity;
    for (const entry of this.entries.values()) earliest = Math.min(earliest, entry.deadline);
    this.#at = earliest;
    if (earliest === Infinity) return this.#timer.clear();
    this.#timer.set(Math.max(0, earliest - this.clock.now()));
  }

  /** Loses every lease past its deadline, then re-arms. */
  expire(): void {
    const now = this.clock.now();
    for (const entry of [...this.entries.values()]) if (entry.deadline <= now) this.lose(entry);
    this.arm();
  }

  clear(): void {
    this.#timer.clear();
  }
}
