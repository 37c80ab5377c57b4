// Where a batch's items come from: a plain array (read by index, as its own
// iterator would read it, so no user code runs per item), a sync iterator or
// an async one, each step checked as `for...of` and `for await` check it.
import { show } from "../_validate.ts";

const arrayValues = Array.prototype[Symbol.iterator];

/** What a pull gives when the source has no more items. */
export const END: unique symbol = Symbol("end");

export class BatchSource<I> {
  readonly array: readonly I[] | undefined = undefined;
  #sync: Iterator<I> | undefined = undefined;
  #async: AsyncIterator<I> | undefined = undefined;

  constructor(readonly operation: string, readonly items: Iterable<I> | AsyncIterable<I>) {
    if (Array.isArray(items) && items[Symbol.iterator] === arrayValues) this.array = items;
  }

  get isAsync(): boolean {
    return this.#async !== undefined;
  }

  /** Gets the iterator (arrays need none); throws what the source throws. */
  open(): void {
    if (this.array !== undefined) return;
    const items = this.items;
    if (typeof (items as Iterable<I>)[Symbol.iterator] === "function") {
      this.#sync = this.#objectFrom(
        "[Symbol.iterator]()",
        (items as Iterable<I>)[Symbol.iterator](),
      );
    } else {
      this.#async = this.#objectFrom(
        "[Symbol.asyncIterator]()",
        (items as AsyncIterable<I>)[Symbol.asyncIterator](),
      );
    }
  }

  /** The item at `index` of a sync source, or END; throws what the source throws. */
  pull(index: number): I | typeof END {
    const array = this.array;
    if (array !== undefined) return index < array.length ? array[index] : END;
    const step = this.#objectFrom("the iterator's next()", this.#sync!.next());
    return step.done ? END : step.value;
  }

  /** The next item of an async source, or END; rejects with what the source throws. */
  async pullAsync(): Promise<I | typeof END> {
    const step = this.#objectFrom("the async iterator's next()", await this.#async!.next());
    return step.done ? END : step.value;
  }

  /** Closes the source so a generator can run its cleanup; never throws. */
  close(): void {
    try {
      const closing = this.#sync?.return?.() ?? this.#async?.return?.();
      if (closing instanceof Promise) closing.catch(() => {});
    } catch {
      // A source that fails to close cannot change the outcome any more.
    }
  }

  #objectFrom<T>(what: string, value: T): T {
    if (value === null || (typeof value !== "object" && typeof value !== "function")) {
      throw new TypeError(
        `${this.operation} items: ${what} must return an object, got ${show(value)}`,
      );
    }
    return value;
  }
}
