// The fifo policy's line of waiters (`ForkOptions.priority`): the highest
// priority first, first come first served within one priority. Programs that
// never set a priority keep a single queue; per-priority queues are made
// only when a non-zero priority shows up, and dropped again once only
// priority 0 waits. The queues are rings, not linked lists (see _ring_line.ts).
import { type RingEntry, RingLine } from "./_ring_line.ts";

/** A waiter with the priority it was queued with (fixed while it waits). */
export interface Prioritized extends RingEntry {
  readonly priority: number;
}

/** The per-priority queues, once a non-zero priority has been seen. */
class Lanes<T extends Prioritized> {
  readonly #byPriority = new Map<number, RingLine<T>>();
  /** The priorities that have a queue, highest first; usually a handful. */
  readonly #order: number[] = [];
  size: number;

  constructor(base: RingLine<T>) {
    this.#byPriority.set(0, base);
    this.#order.push(0);
    this.size = base.size;
  }

  /** True once only priority 0 (the base queue) is left. */
  get onlyBase(): boolean {
    return this.#order.length === 1;
  }

  push(node: T): void {
    const priority = node.priority;
    let lane = this.#byPriority.get(priority);
    if (lane === undefined) {
      lane = new RingLine<T>();
      this.#byPriority.set(priority, lane);
      let at = 0;
      while (at < this.#order.length && this.#order[at] > priority) at++;
      this.#order.splice(at, 0, priority);
    }
    lane.push(node);
    this.size++;
  }

  peek(): T | undefined {
    for (const priority of this.#order) {
      const head = this.#byPriority.get(priority)!.peek();
      if (head !== undefined) return head;
    }
    return undefined;
  }

  shift(): T | undefined {
    const head = this.peek();
    if (head !== undefined) this.remove(head);
    return head;
  }

  remove(node: T): boolean {
    const priority = node.priority;
    const lane = this.#byPriority.get(priority);
    if (lane === undefined || !lane.remove(node)) return false;
    this.size--;
    if (lane.size === 0 && priority !== 0) {
      this.#byPriority.delete(priority);
      this.#order.splice(this.#order.indexOf(priority), 1);
    }
    return true;
  }

  removeWhere(predicate: (node: T) => boolean): T[] {
    const removed: T[] = [];
    for (const priority of [...this.#order]) {
      for (const node of [...this.#byPriority.get(priority)!]) {
        if (predicate(node) && this.remove(node)) removed.push(node);
      }
    }
    return removed;
  }
}

export class WaitLine<T extends Prioritized> {
  /** Priority 0: the whole line until a non-zero priority is queued. */
  readonly #base = new RingLine<T>();
  #lanes: Lanes<T> | undefined = undefined;

  get size(): number {
    return this.#lanes === undefined ? this.#base.size : this.#lanes.size;
  }

  push(node: T): void {
    if (this.#lanes !== undefined) this.#lanes.push(node);
    else if (node.priority === 0) this.#base.push(node);
    else (this.#lanes = new Lanes(this.#base)).push(node);
  }

  shift(): T | undefined {
    const lanes = this.#lanes;
    if (lanes === undefined) return this.#base.shift();
    const node = lanes.shift();
    if (lanes.onlyBase) this.#lanes = undefined;
    return node;
  }

  /** Unlinks `node`; false if it was not waiting (already served). */
  remove(node: T): boolean {
    const lanes = this.#lanes;
    if (lanes === undefined) return node.priority === 0 && this.#base.remove(node);
    const removed = lanes.remove(node);
    if (lanes.onlyBase) this.#lanes = undefined;
    return removed;
  }

  /** Unlinks and returns every node matching `predicate`, highest priority first. */
  removeWhere(predicate: (node: T) => boolean): T[] {
    const lanes = this.#lanes;
    if (lanes === undefined) return this.#base.removeWhere(predicate);
    const removed = lanes.removeWhere(predicate);
    if (lanes.onlyBase) this.#lanes = undefined;
    return removed;
  }
}
