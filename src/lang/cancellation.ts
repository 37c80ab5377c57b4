// A process's cancellation state. The AbortController behind `signal` is
// created only when somebody asks for the signal: most processes never do,
// and a fork should not pay for one.
import type { ProcessCancelledError } from "../errors.ts";
import { QueueNode } from "../_linked_queue.ts";

// A QueueNode so that the scope owning a process can keep its running
// processes in an O(1) intrusive list rather than a hashed Set.
export class Cancellation extends QueueNode {
  #reason: ProcessCancelledError | undefined = undefined;
  #controller: AbortController | undefined = undefined;

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
    return true;
  }

  throwIfRequested(): void {
    if (this.#reason !== undefined) throw this.#reason;
  }
}
