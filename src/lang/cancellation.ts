// A process's cancellation state. The AbortController behind `signal` is
// created only when somebody asks for the signal: most processes never do,
// and a fork should not pay for one.
import type { ProcessCancelledError } from "../errors.ts";
import { LinkedQueue, QueueNode } from "../_linked_queue.ts";

/**
 * Something pending that a cancellation must call off at once (a delay). A
 * list of these is much cheaper than an abort listener per operation.
 */
export abstract class CancelHook extends QueueNode {
  abstract cancelled(reason: ProcessCancelledError): void;
}

// A QueueNode so that the scope owning a process can keep its running
// processes in an O(1) intrusive list rather than a hashed Set.
export class Cancellation extends QueueNode {
  #reason: ProcessCancelledError | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  #hooks: LinkedQueue<CancelHook> | undefined = undefined;

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
    const hooks = this.#hooks;
    if (hooks !== undefined) {
      for (let hook = hooks.shift(); hook !== undefined; hook = hooks.shift()) {
        hook.cancelled(reason);
      }
    }
    return true;
  }

  /** Calls `hook.cancelled` on cancellation, unless removed first. */
  addHook(hook: CancelHook): void {
    (this.#hooks ??= new LinkedQueue()).push(hook);
  }

  removeHook(hook: CancelHook): void {
    this.#hooks?.remove(hook);
  }

  throwIfRequested(): void {
    if (this.#reason !== undefined) throw this.#reason;
  }
}
