// The worker's side of the channel: one message loop per worker, running
// one process at a time (a WorkerRun).
import { setImmediate } from "node:timers";
import { Outbox } from "./_outbox.ts";
import type { Batch, FromWorker, ToWorker } from "./protocol.ts";
import { WorkerRun } from "./worker_run.ts";

/**
 * The most messages a worker sends in one batch: the runtime handles a batch
 * in one go, so a larger one (a log loop's) would hold its event loop that
 * long. 256 logs of a few properties are ~10-20 KB of JSON, within a ring frame.
 */
export const MAX_BATCH = 256;

/** How a worker talks to its runtime (a MessagePort-like object, or a pipe). */
export interface WorkerPort {
  /** Sends a batch; throws (DataCloneError) if a value cannot be cloned. */
  post(batch: Batch<FromWorker>): void;
}

/** One worker's message loop. */
export class WorkerLoop {
  readonly outbox: Outbox<FromWorker>;
  stamp = 0;
  #received = 0;
  #run: WorkerRun | undefined = undefined;
  #idleScheduled = false;
  #reportIdle = false;

  constructor(port: WorkerPort) {
    this.outbox = new Outbox<FromWorker>(
      (m) => port.post({ now: 0, m }),
      (message, error) => this.#run?.refused(message, error),
      MAX_BATCH,
    );
  }

  /** Handles one batch from the runtime. */
  readonly receive = (batch: Batch<ToWorker>): void => {
    this.#received++;
    this.stamp = batch.now;
    for (const message of batch.m) {
      if (message.t === "run") {
        this.#run = new WorkerRun(this, message);
        this.#reportIdle = message.idle === true;
        this.#run.start();
      } else {
        this.#run?.receive(message);
      }
    }
    this.scheduleIdle();
  };

  /**
   * Nothing to run until the runtime sends more (the last run ended), on a
   * runtime that does not ask for idle reports (a test runtime's gate waits
   * for those, so its workers never block waiting).
   */
  get waiting(): boolean {
    return !this.#reportIdle && (this.#run === undefined || this.#run.ended);
  }

  /** Says "idle" once the script has nothing left to run (when the runtime asked for it). */
  scheduleIdle(): void {
    if (this.#reportIdle && !this.#idleScheduled) {
      this.#idleScheduled = true;
      setImmediate(this.#idle);
    }
  }

  /** The script called `close()`: tell the runtime before going. */
  closing(): void {
    this.outbox.push({ t: "closing" });
    this.outbox.flush();
  }

  readonly #idle = (): void => {
    this.#idleScheduled = false;
    if (this.#run !== undefined && !this.#run.ended && !this.#run.loading) {
      this.outbox.push({ t: "idle", n: this.#received });
    }
  };
}
