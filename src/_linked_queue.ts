// A FIFO queue whose entries can also leave from the middle in O(1). Waiters
// (for a pool slot, for a variable's lock) withdraw when their signal aborts;
// an array would make that O(n) and `Array#shift` makes every dequeue O(n).
// Small npm queues (yocto-queue, denque) dequeue in O(1) but cannot unlink an
// entry, so the node links live on the entries themselves.

/**
 * An entry that can sit in one LinkedQueue at a time. No "queued" flag: a
 * node is in its queue iff it has a predecessor or is the head, and every
 * queued fork is one field smaller for it.
 */
export class QueueNode {
  /** @internal */ _prev: QueueNode | undefined = undefined;
  /** @internal */ _next: QueueNode | undefined = undefined;
}

export class LinkedQueue<T extends QueueNode> {
  #head: T | undefined = undefined;
  #tail: T | undefined = undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  // push and remove store `#head` and `#tail` on every call, whether the
  // queue is empty, has one entry or many: a store first reached after V8
  // has optimised the function (a queue that empties only at the end of a
  // burst) deoptimises it and every function it was inlined into. On the
  // fifo hand-off path that left the stop and admission bookkeeping
  // unoptimised for the whole next burst (see BENCHMARKS.md).
  push(node: T): void {
    const tail = this.#tail;
    node._prev = tail;
    node._next = undefined;
    this.#head = tail === undefined ? node : this.#head;
    if (tail !== undefined) tail._next = node;
    this.#tail = node;
    this.#size++;
  }

  peek(): T | undefined {
    return this.#head;
  }

  shift(): T | undefined {
    const node = this.#head;
    if (node !== undefined) this.remove(node);
    return node;
  }

  *[Symbol.iterator](): Generator<T> {
    for (let node = this.#head; node !== undefined;) {
      const next = node._next as T | undefined;
      yield node;
      node = next;
    }
  }

  /** Unlinks and returns every node matching `predicate`, in queue order. O(n). */
  removeWhere(predicate: (node: T) => boolean): T[] {
    const removed: T[] = [];
    for (let node = this.#head; node !== undefined;) {
      const next = node._next as T | undefined;
      if (predicate(node)) {
        this.remove(node);
        removed.push(node);
      }
      node = next;
    }
    return removed;
  }

  /** Unlinks `node`; returns false if it was not queued (already served). */
  remove(node: T): boolean {
    if (node._prev === undefined && this.#head !== node) return false;
    const prev = node._prev as T | undefined;
    const next = node._next as T | undefined;
    this.#head = prev === undefined ? next : this.#head;
    this.#tail = next === undefined ? prev : this.#tail;
    if (prev !== undefined) prev._next = next;
    if (next !== undefined) next._prev = prev;
    node._prev = node._next = undefined;
    this.#size--;
    return true;
  }
}
