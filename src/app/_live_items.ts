// A batch's items that were admitted and have not stopped yet, so that the
// batch can cancel them and a scope can list them (the test runtime's stuck
// report). Not a linked list, as the scope keeps its forked processes: with
// items in the scope's list, or in a list of the batch's own, forkAll over
// 200 000 items took 7-9 % more CPU than with this table (BENCHMARKS.md,
// "forkAll after 8626bf8"). Most likely the write barrier: the list soon
// sits in V8's old generation, and a list's push and remove store the new
// record into it about four times per item, the table once.
import type { ItemRecord } from "./_records.ts";
import type { ProcessRecord } from "./process.ts";
import type { ScopeDependent } from "./_fork_host.ts";
import { emptySlots } from "../_empty_slots.ts";

export class LiveItems {
  // Open addressing: an item sits in the first free cell from its index's
  // (`tag & mask`), at most half of the cells are taken.
  #cells: (ItemRecord | undefined)[] = emptySlots(16);
  #count = 0;

  get size(): number {
    return this.#count;
  }

  add(record: ItemRecord): void {
    if (2 * ++this.#count > this.#cells.length) this.#grow();
    place(this.#cells, record);
  }

  /** Forgets an item `add` was given; a no-op for any other. */
  remove(record: ItemRecord): void {
    const cells = this.#cells;
    const mask = cells.length - 1;
    // A cell freed earlier on the way is no stop sign: the item may have
    // been placed past it while it was taken.
    for (let at = record.tag & mask, left = cells.length; left > 0; at = (at + 1) & mask, left--) {
      if (cells[at] === record) {
        cells[at] = undefined;
        this.#count--;
        return;
      }
    }
  }

  /** The items, in the order they were admitted. */
  toArray(): ItemRecord[] {
    const records: ItemRecord[] = [];
    for (const record of this.#cells) if (record !== undefined) records.push(record);
    return records.sort((a, b) => a.id - b.id);
  }

  #grow(): void {
    const old = this.#cells;
    const cells = emptySlots<ItemRecord>(old.length * 2);
    for (const record of old) if (record !== undefined) place(cells, record);
    this.#cells = cells;
  }
}

function place(cells: (ItemRecord | undefined)[], record: ItemRecord): void {
  const mask = cells.length - 1;
  let at = record.tag & mask;
  while (cells[at] !== undefined) at = (at + 1) & mask;
  cells[at] = record;
}

/** A scope's forked processes and its batches' items, in the order they were admitted. */
export function withLiveItems(
  forked: Iterable<ProcessRecord>,
  dependents: Iterable<ScopeDependent>,
): ProcessRecord[] {
  const records = [...forked];
  let items = false;
  for (const dependent of dependents) {
    const live = dependent.liveProcesses?.();
    if (live === undefined || live.length === 0) continue;
    records.push(...live);
    items = true;
  }
  return items ? records.sort((a, b) => a.id - b.id) : records;
}
