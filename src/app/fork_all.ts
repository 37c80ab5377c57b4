// forkAll: Promise.all over the pool. The first failure cancels the rest
// (unstarted items never start); unlike Promise.all, forkAll settles only once
// its cancelled processes have stopped. The feeding is Batch's (_batch.ts).
import { ProcessCancelledError } from "../errors.ts";
import type { LangL } from "../lang/lang.ts";
import type { CheckedForkOptions } from "./_options.ts";
import type { ItemRecord } from "./_records.ts";
import { Batch } from "./_batch.ts";
import type { ForkHost } from "./_fork_host.ts";

export class ForkAllRun<I, T> extends Batch<I> {
  readonly promise: Promise<T[]>;
  #resolve!: (results: T[]) => void;
  #reject!: (reason: unknown) => void;
  #results: T[] = [];
  #failure: { error: unknown } | undefined = undefined;

  constructor(
    host: ForkHost,
    items: Iterable<I> | AsyncIterable<I>,
    process: (item: I, lang: LangL) => Promise<T> | T,
    options: CheckedForkOptions,
  ) {
    super(host, "forkAll", process, options);
    // Sized up front for an array, as growing it by index was a visible cost.
    if (Array.isArray(items)) this.#results = new Array(items.length);
    this.promise = new Promise<T[]>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.begin(items);
  }

  scopeCancelled(): void {
    this.#fail(this.host.closedError());
  }

  protected aborted(reason: unknown): void {
    this.#fail(reason);
  }

  protected sourceFailed(error: unknown): void {
    this.#fail(error);
  }

  protected itemStopped(record: ItemRecord): void {
    // The status once: a succeeded record's outcome is its value.
    if (record.status === "succeeded") {
      this.#results[record.tag] = record._outcome as T;
    } else if (this.#failure === undefined) {
      // forkAll delivers this failure, so the scope need not re-raise it.
      record.markObserved();
      this.#fail(record.error);
    }
  }

  #fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = { error };
    this.stopFeeding(
      new ProcessCancelledError("a sibling in forkAll did not succeed", { cause: error }),
    );
  }

  protected finished(): void {
    if (this.#failure !== undefined) this.#reject(this.#failure.error);
    else {
      // An array that shrank while it was fed has fewer items than its first length.
      const results = this.#results;
      if (results.length !== this.pulled) results.length = this.pulled;
      this.#resolve(results);
    }
  }
}
