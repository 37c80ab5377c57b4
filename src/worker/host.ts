// One worker, as the runtime holds it: its transport, its outbox, and the
// process it runs now (at most one).
import { WorkerCrashedError } from "../errors.ts";
import { Outbox } from "./_outbox.ts";
import type { Batch, FromWorker, ToWorker } from "./protocol.ts";
import type { RemoteRun, RunHost } from "./remote_run.ts";
import type { GatedWorker } from "./_gate.ts";
import { ThreadTransport, type Transport } from "./_transport.ts";
import { ProcessTransport } from "./_process_transport.ts";
import type { WorkerPool } from "./pool.ts";

/** Where a worker process runs: a Web Worker, or a Deno child process. */
export type Isolation = "thread" | "process";

export class WorkerHost implements RunHost, GatedWorker {
  readonly #transport: Transport;
  readonly #outbox: Outbox<ToWorker>;
  alive = true;
  posted = 0;
  /** The process running on this worker now. */
  run: RemoteRun | undefined = undefined;
  #stopped: Promise<void> | undefined = undefined;

  constructor(readonly pool: WorkerPool, readonly kind: Isolation) {
    const events = {
      batch: (batch: Batch<FromWorker>) => this.#onBatch(batch),
      crashed: (error: WorkerCrashedError) => this.#crashed(error),
    };
    this.#transport = kind === "thread"
      ? new ThreadTransport(events)
      : new ProcessTransport(events);
    this.#outbox = new Outbox<ToWorker>((messages) => this.#post(messages), () => {});
  }

  /** The OS process id of a "process" worker. */
  get pid(): number | undefined {
    return this.#transport.pid;
  }

  send(message: ToWorker): void {
    if (this.alive) this.#outbox.push(message);
  }

  postNow(messages: ToWorker[]): void {
    if (!this.alive) return;
    const now = this.pool.clock.now();
    try {
      this.#transport.post({ now, m: messages });
      this.posted++;
    } catch {
      // A value structured clone refuses: send the rest one by one, and
      // tell the run what could not go.
      for (const message of messages) {
        try {
          this.#transport.post({ now, m: [message] });
          this.posted++;
        } catch (error) {
          if (message.t === "run") this.run?.refusedInput(error);
          else this.run?.refusedReply(message, error);
        }
      }
    }
  }

  runEnded(run: RemoteRun): void {
    if (this.run !== run) return;
    this.run = undefined;
    this.pool.release(this);
  }

  forceStop(): Promise<void> {
    return this.stop();
  }

  /** Stops the worker (SIGKILL for a process); resolves once it is gone. */
  stop(): Promise<void> {
    if (this.#stopped === undefined) {
      this.#lose();
      this.#stopped = this.#transport.kill();
      this.pool.track(this.#stopped);
    }
    return this.#stopped;
  }

  #post(messages: ToWorker[]): void {
    const gate = this.pool.gate;
    if (gate === undefined) this.postNow(messages);
    else gate.deliver(this, messages);
  }

  #onBatch(batch: Batch<FromWorker>): void {
    if (!this.alive) return;
    for (const message of batch.m) {
      switch (message.t) {
        case "idle":
          this.pool.gate?.idle(this, message.n);
          break;
        case "closing":
          this.#crashed(new WorkerCrashedError("the worker script closed its worker (close())"));
          return;
        case "done":
          this.run?.receive(message);
          this.pool.gate?.idle(this, this.posted);
          break;
        default:
          this.run?.receive(message);
      }
    }
  }

  #crashed(error: WorkerCrashedError): void {
    if (!this.alive) return;
    const run = this.run;
    this.stop();
    run?.crashed(error);
  }

  #lose(): void {
    if (!this.alive) return;
    this.alive = false;
    this.run = undefined;
    this.pool.gate?.lost(this);
    this.pool.lost(this);
  }
}
