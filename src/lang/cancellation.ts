// A process's cancellation state. The AbortController behind `signal` is
// created only when somebody asks for the signal: most processes never do,
// and a fork should not pay for one.
import type { ProcessCancelledError } from "../errors.ts";
import { QueueNode } from "../_linked_queue.ts";

/**
 * Something pending that a cancellation must call off at once (a delay).
 * Cheaper than an abort listener per operation.
 */
export interface CancelHook {
  cancelled(reason: ProcessCancelledError): void;
}

// A QueueNode so that the scope owning a process can keep its running
// processes in an O(1) intrusive list rather than a hashed Set.
export class Cancellation extends QueueNode {
  #reason: ProcessCancelledError | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  // A process usually has at most one pending delay: one slot, then a Set.
  #hook: CancelHook | undefined = undefined;
  #moreHooks: Set<CancelHook> | undefined = undefined;

  get requested(): boolean {
    return this.#reason !== undefined;
  }

  /** The error the process's operations reject with once cancelled. */
  get reason(): ProcessCancelledError | undefined {
    return this.#reason;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Requests cancellation; false if it was already requested. */
  request(reason: ProcessCancelledError): boolean {
    if (this.#reason !== undefined) return false;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const hook = this.#hook;
    const more = this.#moreHooks;
    this.#hook = this.#moreHooks = undefined;
    hook?.cancelled(reason);
    if (more !== undefined) { for (const other of more) other.cancelled(reason); }
    return true;
  }

  /** Calls `hook.cancelled` on cancellation, unless removed first. */
  addHook(hook: CancelHook): void {
    if (this.#hook === undefined) this.#hook = hook;
    else (this.#moreHooks ??= new Set()).add(hook);
  }

  removeHook(hook: CancelHook): void {
    if (this.#hook === hook) this.#hook = undefined;
    else this.#moreHooks?.delete(hook);
  }

  throwIfRequested(): void {
    if (this.#reason !== undefined) throw this.#reason;
  }
}
