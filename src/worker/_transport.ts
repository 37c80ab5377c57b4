// How the runtime reaches one worker: a Web Worker ("thread") or a Deno
// child process ("process"). Both carry batches of the same messages.
import { WorkerCrashedError } from "../errors.ts";
import type { Batch, FromWorker, ToWorker } from "./protocol.ts";
import { type LaneInit, LaneReceiver, LaneSender, type Sequenced } from "./_lane.ts";
import { FrameRing } from "./_ring.ts";

/** Bytes of frames each way per worker thread (a tiny run's batch is ~150). */
export const RING_BYTES = 64 * 1024;

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
  readonly #sender: LaneSender<ToWorker>;
  readonly #stopListening: () => void;
  readonly pid = undefined;

  constructor(events: TransportEvents) {
    const worker = this.#worker = new Worker(new URL("./thread_main.ts", import.meta.url), {
      type: "module",
    });
    const toWorker = FrameRing.create(RING_BYTES);
    const fromWorker = FrameRing.create(RING_BYTES);
    const init: LaneInit = { rings: [toWorker.buffer, fromWorker.buffer] };
    worker.postMessage(init);
    this.#sender = new LaneSender<ToWorker>(toWorker, (batch) => worker.postMessage(batch));
    const receiver = new LaneReceiver<FromWorker>((batch) => events.batch(batch));
    this.#stopListening = fromWorker.listen(() => receiver.drain(fromWorker));
    worker.onmessage = (event: MessageEvent<Sequenced<FromWorker>>) =>
      receiver.receivePosted(event.data, fromWorker);
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
    this.#sender.send(batch);
  }

  kill(): Promise<void> {
    // Deno 2.9.6 does not interrupt a synchronous loop on terminate(): the
    // thread may run on, but nothing of it reaches the runtime any more.
    this.#stopListening();
    this.#worker.onmessage = this.#worker.onerror = this.#worker.onmessageerror = null;
    this.#worker.terminate();
    return Promise.resolve();
  }
}
