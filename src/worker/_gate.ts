// Determinism on a test runtime. Workers run in parallel with the runtime's
// thread and with one another, so the order in which their messages arrive
// depends on real timing. On a test runtime the gate lets one worker run at a
// time: a batch for another worker waits until the running one has nothing
// left to do (it said "idle", ended its script, or died). While a worker
// runs, the virtual clock holds still: its computation takes no virtual time.

/** A worker as the gate sees it. */
export interface GatedWorker {
  readonly alive: boolean;
  /** Batches posted to the worker so far. */
  readonly posted: number;
  postNow(messages: unknown[]): void;
}

export class SerialGate {
  #runner: GatedWorker | undefined = undefined;
  #queue: [GatedWorker, unknown[]][] = [];

  /** `hold(true)` when a worker starts running, `hold(false)` when none runs. */
  constructor(readonly hold: (held: boolean) => void) {}

  deliver(worker: GatedWorker, messages: unknown[]): void {
    if (this.#runner === undefined) {
      this.#runner = worker;
      this.hold(true);
      worker.postNow(messages);
    } else if (this.#runner === worker) {
      worker.postNow(messages);
    } else {
      this.#queue.push([worker, messages]);
    }
  }

  /** The worker has run everything it was posted up to its `received`-th batch. */
  idle(worker: GatedWorker, received: number): void {
    if (this.#runner === worker && received === worker.posted) this.#next();
  }

  /** The worker is gone; what was queued for it is dropped. */
  lost(worker: GatedWorker): void {
    this.#queue = this.#queue.filter(([w]) => w !== worker);
    if (this.#runner === worker) this.#next();
  }

  #next(): void {
    this.#runner = undefined;
    const entry = this.#queue.shift();
    if (entry === undefined) {
      this.hold(false);
      return;
    }
    const worker = this.#runner = entry[0];
    // Everything queued for it goes now, in order, so nothing overtakes it later.
    const messages = [...entry[1]];
    this.#queue = this.#queue.filter(([w, m]) => w !== worker || (messages.push(...m), false));
    worker.postNow(messages);
  }
}
