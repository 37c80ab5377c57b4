// forkAllSettled: Promise.allSettled over the pool. Every item's outcome, in
// input order, with its process id and name; no item makes it reject. Its
// signal cancels the items in flight and skips the rest, and it still
// resolves; its scope's cancellation rejects it, like any AppL call. The
// feeding is Batch's (_batch.ts).
import { ProcessCancelledError, type ProcessFailedError } from "../errors.ts";
import type { LangL } from "../lang/lang.ts";
import type { ProcessOutcome } from "./app.ts";
import type { CheckedForkOptions } from "./_options.ts";
import type { ProcessRecord } from "./process.ts";
import type { ItemRecord } from "./_records.ts";
import { Batch } from "./_batch.ts";
import type { ForkHost } from "./_fork_host.ts";

/** A stopped process's outcome, as forkAllSettled and forkStream report it. */
export function outcomeOf<T>(record: ProcessRecord): ProcessOutcome<T> {
  const { id, name } = record;
  const named = name === undefined ? {} : { name };
  if (record.status === "succeeded") {
    return { status: "succeeded", value: record.value as T, id, ...named };
  }
  if (record.status === "failed") {
    return { status: "failed", error: record.error as ProcessFailedError, id, ...named };
  }
  // The reason given to cancel (the signal's reason); a ProcessTimeoutError
  // (or another subclass) is its own reason.
  const error: Error = record.error!;
  const reason = Object.getPrototypeOf(error) === ProcessCancelledError.prototype
    ? error.cause
    : error;
  return { status: "cancelled", reason, id, ...named };
}

export class ForkAllSettledRun<I, T> extends Batch<I> {
  readonly promise: Promise<ProcessOutcome<T>[]>;
  #resolve!: (outcomes: ProcessOutcome<T>[]) => void;
  #reject!: (reason: unknown) => void;
  readonly #outcomes: ProcessOutcome<T>[] = [];
  /** Why the call rejects: its scope was cancelled, or its source failed. */
  #failure: { error: unknown } | undefined = undefined;
  /** Why items were skipped: the signal's reason. */
  #skipped: { reason: unknown } | undefined = undefined;

  constructor(
    host: ForkHost,
    items: Iterable<I> | AsyncIterable<I>,
    process: (item: I, lang: LangL) => Promise<T> | T,
    options: CheckedForkOptions,
  ) {
    super(host, "forkAllSettled", process, options);
    this.promise = new Promise<ProcessOutcome<T>[]>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.begin(items);
  }

  scopeCancelled(): void {
    this.#fail(this.host.closedError());
  }

  protected aborted(reason: unknown): void {
    if (this.#failure !== undefined || this.#skipped !== undefined) return;
    this.#skipped = { reason };
    this.stopFeeding(reason);
  }

  protected sourceFailed(error: unknown): void {
    this.#fail(error);
  }

  #fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = { error };
    this.stopFeeding(
      new ProcessCancelledError("forkAllSettled could not go on", { cause: error }),
    );
  }

  protected itemStopped(record: ItemRecord): void {
    // Delivered in the outcomes, so the scope need not re-raise it (and
    // onFailure does not hear of it); logged below if the call rejects.
    if (record.status === "failed") record.markObserved();
    this.#outcomes[record.tag] = outcomeOf<T>(record);
  }

  protected finished(): void {
    const outcomes = this.#outcomes;
    if (this.#failure !== undefined) {
      for (const outcome of outcomes) {
        if (outcome?.status !== "failed") continue;
        this.host.core.logger.error(
          "a process failure was not reported because forkAllSettled rejected: {error}",
          { error: outcome.error, reported: this.#failure.error },
        );
      }
      this.#reject(this.#failure.error);
      return;
    }
    // Items pulled but never started, and for an array the ones never pulled.
    const count = this.arrayItems?.length ?? this.pulled;
    const reason = this.#skipped?.reason;
    for (let index = 0; index < count; index++) {
      outcomes[index] ??= { status: "skipped", reason };
    }
    this.#resolve(outcomes);
  }
}
