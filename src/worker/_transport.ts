// How the runtime reaches one worker: a Web Worker ("thread") or a Deno
// child process ("process"). Both carry batches of the same messages.
import { WorkerCrashedError } from "../errors.ts";
import type { Batch, FromWorker, ToWorker } from "./protocol.ts";

/** What a transport reports to its worker host. */
export interface TransportEvents {
  batch(batch: Batch<FromWorker>): void;
  /** The worker died on its own (not through `kill` or `close`). */
  crashed(error: WorkerCrashedError): void;
}

export interface Transport {
  /** Sends a batch; throws (DataCloneError) if a value cannot be cloned. */
  post(batch: Batch<ToWorker>): void;
  /** Stops the worker by force; resolves once it is gone (its OS process reaped). */
  kill(): Promise<void>;
  /** The OS process id of a "process" worker. */
  readonly pid: number | undefined;
}

export class ThreadTransport implements Transport {
  readonly #worker: Worker;
  readonly pid = undefined;

  constructor(events: TransportEvents) {
    const worker = this.#worker = new Worker(new URL("./thread_main.ts", import.meta.url), {
      type: "module",
    });
    worker.onmessage = (event: MessageEvent<Batch<FromWorker>>) => events.batch(event.data);
    worker.onerror = (event: ErrorEvent) => {
      // Handled here: otherwise Deno rethrows it in the runtime's thread.
      event.preventDefault();
      events.crashed(
        new WorkerCrashedError(`the worker thread died of an uncaught error: ${event.message}`),
      );
    };
    worker.onmessageerror = () => {
      events.crashed(new WorkerCrashedError("a message from the worker thread could not be read"));
    };
  }

  post(batch: Batch<ToWorker>): void {
    this.#worker.postMessage(batch);
  }

  kill(): Promise<void> {
    // Deno 2.9.6 does not interrupt a synchronous loop on terminate(): the
    // thread may run on, but nothing of it reaches the runtime any more.
    this.#worker.onmessage = this.#worker.onerror = this.#worker.onmessageerror = null;
    this.#worker.terminate();
    return Promise.resolve();
  }
}
