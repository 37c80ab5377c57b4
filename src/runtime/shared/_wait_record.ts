// The lease manager's belief about its wait record in the store: how many
// leases the store thinks this holder waits for. Replies set it; hand-over
// notices lower it, and those heard while a call is in flight lower that
// call's reply too, since the record it describes was written before them.

export class WaitRecord {
  #want = 0;
  #recorded = false;
  /** The send time of the acquire or wait in flight (NaN: none); hand-overs heard for its record. */
  #callTag = NaN;
  #handedDuringCall = 0;

  /** What the store believes this holder waits for. */
  get want(): number {
    return this.#want;
  }

  /** The last reply left a wait record in the store (notices can only lower it since). */
  get recorded(): boolean {
    return this.#recorded;
  }

  /** A call tagged `sentAt` goes to the store. */
  sent(sentAt: number): void {
    this.#callTag = sentAt;
    this.#handedDuringCall = 0;
  }

  /** Its reply: `want` asked for, `granted` given. */
  replied(want: number, granted: number): void {
    // Hand-overs heard before this reply (another connection) shrank the record it describes.
    this.#want = Math.max(0, want - granted - this.#handedDuringCall);
    this.#recorded = this.#want > 0;
  }

  /** The call is over, answered or not. */
  settled(): void {
    this.#callTag = NaN;
  }

  /** A release elsewhere handed one lease over, for the record the call tagged `tag` wrote. */
  handed(tag: number): void {
    this.#want = Math.max(0, this.#want - 1);
    if (tag === this.#callTag) this.#handedDuringCall++;
  }

  /** A hand-over nobody here wanted: the record is stale, so the next pump clears it. */
  stale(): void {
    this.#want = Math.max(this.#want, 1);
  }

  /** The store refused to record a wait (its limit differs): nothing is waited for. */
  refused(): void {
    this.#want = 0;
  }
}
