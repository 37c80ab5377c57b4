// A scope's failure bookkeeping. Every process failure is delivered exactly
// once: to an awaitResult that was waiting for it, to a forkAll-family call,
// to the scope's rejection (failFast, or unobserved at the end), or to
// onFailure, which delivers it as it happens so that a scope living as long as
// a server retains none.
import { logSafely } from "../runtime/_safe_log.ts";
import type { ProcessFailedError } from "../errors.ts";
import type { RuntimeLogger } from "../runtime/options.ts";
import type { ProcessRecord } from "./process.ts";

export type FailureHandler = (error: ProcessFailedError) => void;

export class ScopeFailures {
  readonly #unobserved = new Set<ProcessRecord>();
  #failFastError: Error | undefined = undefined;

  constructor(
    readonly logger: RuntimeLogger,
    readonly failFast: boolean,
    readonly onFailure: FailureHandler | undefined,
  ) {}

  /** Failures held for the scope's end: none while onFailure is set. */
  get retained(): number {
    return this.#unobserved.size;
  }

  /** A process of the scope failed; true if failFast must now cancel the scope. */
  failed(record: ProcessRecord): boolean {
    this.#unobserved.add(record);
    if (!this.failFast || this.#failFastError !== undefined) return false;
    // The scope's rejection delivers it.
    this.#failFastError = record.error;
    record.markObserved();
    return true;
  }

  observed(record: ProcessRecord): void {
    this.#unobserved.delete(record);
  }

  /**
   * A batch that took a failure to deliver (forkStream) will not deliver it
   * after all (its reader left): the failure is the scope's again.
   */
  handedBack(record: ProcessRecord): void {
    record.observed = false;
    if (this.onFailure !== undefined) this.settled(record);
    else this.#unobserved.add(record);
  }

  /**
   * Called once everything that could deliver `record`'s failure (an
   * awaitResult waiting for it, its forkAll run) has heard of it: what is
   * still unobserved goes to onFailure.
   */
  settled(record: ProcessRecord): void {
    if (this.onFailure === undefined || record.observed) return;
    record.markObserved();
    const error = record.error as ProcessFailedError;
    try {
      const returned: unknown = this.onFailure(error);
      if (isThenable(returned)) {
        returned.then(undefined, (thrown) => this.#handlerFailed(thrown, error));
      }
    } catch (thrown) {
      this.#handlerFailed(thrown, error);
    }
  }

  /**
   * The scope has ended: the error it must reject with, if any. `bodyError`
   * is set when the body threw.
   */
  conclude(bodyError: { error: unknown } | undefined): { error: unknown } | undefined {
    const unobserved = [...this.#unobserved].map((record) => record.error!);
    this.#unobserved.clear();
    // The scope reports one error; any other failure is logged, never dropped.
    const reported = this.#failFastError !== undefined ? { error: this.#failFastError } : bodyError;
    if (reported !== undefined) {
      const message = "a process failure was not reported because the scope failed: {error}";
      for (const error of unobserved) {
        logSafely(this.logger, "error", message, { error, reported: reported.error });
      }
      return reported;
    }
    if (unobserved.length === 1) return { error: unobserved[0] };
    if (unobserved.length > 1) {
      return {
        error: new AggregateError(
          unobserved,
          `${unobserved.length} processes failed and nobody awaited their results`,
        ),
      };
    }
    return undefined;
  }

  // The failure is not retained even so: keeping it would bring back the leak
  // onFailure exists to prevent, and the log carries it.
  #handlerFailed(thrown: unknown, failure: ProcessFailedError): void {
    logSafely(this.logger, "error", "onFailure threw {thrown} while handling {error}", {
      thrown,
      error: failure,
      processId: failure.processId,
    });
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null &&
    typeof (value as { then?: unknown }).then === "function";
}
