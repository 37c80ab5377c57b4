// The items of a lane (see _guard.ts) whose scripts wait for their own
// promise job. Each job is a reaction, registered in the lane's clean
// context, to one promise resolved with this queue: no closure is allocated
// per item (a closure and its context were a sixth of forkAll's allocation),
// and each job takes the oldest item queued, as jobs run in the order they
// were queued.
import type { ItemRecord } from "./_records.ts";
import { invokeInLane } from "./_lane_script.ts";
import { emptySlots } from "../_empty_slots.ts";

function startNext(starts: LaneStarts): void {
  starts.startNext();
}

export class LaneStarts {
  /** record, item, record, item, …: a queue that empties every few items. */
  #entries: unknown[] = emptySlots(16);
  #head = 0;
  #tail = 0;
  readonly #self: Promise<LaneStarts>;

  // deno-lint-ignore no-explicit-any
  constructor(readonly process: (item: any, lang: any) => unknown) {
    this.#self = Promise.resolve(this);
  }

  /** Queues the item's job; call only where the lane's context is clean (the feeder). */
  push(record: ItemRecord, item: unknown): void {
    const tail = this.#tail;
    // Stores within the array's length: a store that grows an array was a
    // path of its own, first taken by each new batch's first item (V8 had
    // optimised push for the first batch's array, grown by then).
    if (tail === this.#entries.length) this.#grow();
    const entries = this.#entries;
    entries[tail] = record;
    entries[tail + 1] = item;
    this.#tail = tail + 2;
    this.#self.then(startNext);
  }

  startNext(): void {
    const entries = this.#entries;
    const head = this.#head;
    const record = entries[head] as ItemRecord;
    const item = entries[head + 1];
    entries[head] = entries[head + 1] = undefined;
    if (head + 2 === this.#tail) this.#head = this.#tail = 0;
    else this.#head = head + 2;
    invokeInLane(record, this.process, item);
  }

  #grow(): void {
    const old = this.#entries;
    const entries = emptySlots<unknown>(old.length * 2);
    for (let i = 0; i < old.length; i++) entries[i] = old[i];
    this.#entries = entries;
  }
}
