// The queue under the fifo wait line: a ring of slots in one array, whose
// entries can also leave from the middle in O(1) (a withdrawn fork leaves a
// hole that the next shift skips).
//
// Not a linked list, for the garbage collector's sake: everything a queued
// fork holds (its promise, its reaction, the forker's suspended frame) is
// reachable only through the queue, and a linked list makes that a chain as
// long as the line. V8's collectors follow a chain one link at a time, on one
// thread: with 200 000 forks queued, the scavenges that copied newly queued
// forks ran on one thread, and a full GC's marking could not finish
// concurrently and took 230-250 ms of its final pause (the guarded floor's:
// 0.5-21 ms). Held from one array, they are split between the GC's threads
// (BENCHMARKS.md, "The fifo wait line as a ring").
//
// Small npm queues (yocto-queue, denque) dequeue in O(1) but cannot unlink an
// entry; hence this one.

import { emptySlots } from "../_empty_slots.ts";

/** An entry of a RingLine: it knows its place while it waits. */
export class RingEntry {
  /** @internal Its slot in its line's ring while it waits; -1 otherwise. */
  declare _at: number;

  // Assigned, not a class field: V8 runs a base class's field initializers
  // slowly when it builds a subclass's instance (a queued fork is one).
  constructor() {
    this._at = -1;
  }
}

/** Above this many slots, an empty line gives its array back at the next push. */
const SHRINK_ABOVE = 65_536;
const INITIAL_SLOTS = 16;

/**
 * A FIFO queue of {@linkcode RingEntry} values with O(1) push, shift and
 * remove. An entry sits in one line at a time.
 *
 * The hot paths (push, shift) store the same fields on every call and keep
 * their rare branches (growing, holes) in code that runs early in any
 * line's life: a branch first taken after V8 optimised a function has no
 * type feedback and deoptimises it (see LinkedQueue and
 * tests/handoff_deopt_test.ts).
 */
export class RingLine<T extends RingEntry> {
  #slots: (T | undefined)[] = emptySlots(INITIAL_SLOTS);
  #mask = INITIAL_SLOTS - 1;
  /** The slot of the oldest entry or hole. */
  #head = 0;
  /** Slots in use from the head, holes included. */
  #length = 0;
  /** Entries waiting (holes excluded). */
  #size = 0;

  get size(): number {
    return this.#size;
  }

  push(node: T): void {
    // Read on every push: a read first made once a burst has ended (the line
    // empty at the next push) would have no type feedback.
    const capacity = this.#slots.length;
    if (this.#size === 0 && capacity > SHRINK_ABOVE) this.#reset();
    else if (this.#length === capacity) this.#makeRoom();
    const at = (this.#head + this.#length) & this.#mask;
    this.#slots[at] = node;
    node._at = at;
    this.#length++;
    this.#size++;
  }

  /** The oldest entry, without taking it. */
  peek(): T | undefined {
    if (this.#size === 0) return undefined;
    const slots = this.#slots;
    const mask = this.#mask;
    let head = this.#head;
    let length = this.#length;
    // Skips (and drops) the holes in front; one exists, since size > 0.
    let node = slots[head];
    while (node === undefined) {
      head = (head + 1) & mask;
      length--;
      node = slots[head];
    }
    this.#head = head;
    this.#length = length;
    return node;
  }

  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const slots = this.#slots;
    const mask = this.#mask;
    let head = this.#head;
    let length = this.#length;
    let node: T | undefined;
    // Holes left by removed entries are skipped; an entry exists, since size > 0.
    do {
      node = slots[head];
      slots[head] = undefined;
      head = (head + 1) & mask;
      length--;
    } while (node === undefined);
    this.#head = head;
    this.#length = length;
    this.#size--;
    node._at = -1;
    return node;
  }

  /** Unlinks `node`; returns false if it was not queued here (already served). */
  remove(node: T): boolean {
    const at = node._at;
    if (at < 0 || at >= this.#slots.length || this.#slots[at] !== node) return false;
    this.#slots[at] = undefined;
    node._at = -1;
    // An empty line has only holes left: forget them.
    if (--this.#size === 0) this.#length = 0;
    return true;
  }

  *[Symbol.iterator](): Generator<T> {
    const slots = this.#slots;
    for (let i = 0; i < this.#length; i++) {
      const node = slots[(this.#head + i) & this.#mask];
      if (node !== undefined) yield node;
    }
  }

  /** Unlinks and returns every entry matching `predicate`, in queue order. O(n). */
  removeWhere(predicate: (node: T) => boolean): T[] {
    const removed: T[] = [];
    for (const node of [...this]) {
      if (predicate(node) && this.remove(node)) removed.push(node);
    }
    return removed;
  }

  /**
   * Room for one more at the tail of a full ring. When at most half its slots
   * hold entries, the rest are holes left by withdrawn forks: the entries move
   * together into a ring of the same size. Otherwise it doubles. Without the
   * first case a line that never empties (one fork waiting for a long time)
   * would keep every hole behind it and double for good.
   */
  #makeRoom(): void {
    if (this.#size <= this.#slots.length >>> 1) this.#compact();
    else this.#grow();
  }

  /** The entries, in order, from slot 0 of a fresh array of the same size. */
  #compact(): void {
    const old = this.#slots;
    const slots = emptySlots<T>(old.length);
    const mask = this.#mask;
    let to = 0;
    for (let i = 0; i < this.#length; i++) {
      const node = old[(this.#head + i) & mask];
      if (node === undefined) continue;
      slots[to] = node;
      node._at = to++;
    }
    this.#slots = slots;
    this.#head = 0;
    this.#length = to;
  }

  /**
   * Twice the slots. Called when the ring is full, so slots `head..end` hold
   * the oldest entries and `0..head` the newest (wrapped): in the doubled
   * ring (same head) the older keep their slots and the wrapped move up by
   * the old size, which is where a copy of the array after itself puts them.
   * Built-in copies and fills rather than a loop over every slot.
   */
  #grow(): void {
    const old = this.#slots;
    const size = old.length;
    const head = this.#head;
    const slots = old.concat(old);
    slots.fill(undefined, 0, head);
    slots.fill(undefined, size + head);
    for (let at = size; at < size + head; at++) {
      const node = slots[at];
      if (node !== undefined) node._at = at;
    }
    this.#slots = slots;
    this.#mask = 2 * size - 1;
  }

  /** @internal The ring's slot count, for tests of its growth. */
  get slotCount(): number {
    return this.#slots.length;
  }

  /** Gives a large, empty line's array back. */
  #reset(): void {
    this.#slots = emptySlots(INITIAL_SLOTS);
    this.#mask = INITIAL_SLOTS - 1;
    this.#head = 0;
    this.#length = 0;
  }
}
