// The runtime's workers: at most `max` of each isolation kind, kept warm and
// reused, one process at a time each. A fork that finds none free waits in
// FIFO order; a worker that died or was stopped is replaced by a fresh one
// when somebody needs it.
import { LinkedQueue, QueueNode } from "../_linked_queue.ts";
import type { Clock } from "../runtime/clock.ts";
import { SerialGate } from "./_gate.ts";
import { type Isolation, WorkerHost } from "./host.ts";

/** A fork waiting for a worker; it is its own queue entry. */
export abstract class WorkerWaiter extends QueueNode {
  /** Runs once, with the worker already reserved for this waiter. */
  abstract workerGranted(host: WorkerHost): void;
}

class Kind {
  readonly idle: WorkerHost[] = [];
  live = 0;
  readonly waiters = new LinkedQueue<WorkerWaiter>();
}

export class WorkerPool {
  readonly gate: SerialGate | undefined;
  readonly #kinds: Record<Isolation, Kind> = { thread: new Kind(), process: new Kind() };
  readonly #all = new Set<WorkerHost>();
  readonly #stopping = new Set<Promise<void>>();
  #disposed = false;

  constructor(
    readonly max: number,
    readonly clock: Clock,
    hold: ((held: boolean) => void) | undefined,
  ) {
    this.gate = hold === undefined ? undefined : new SerialGate(hold);
  }

  /** Workers alive now, of both kinds. */
  get size(): number {
    return this.#all.size;
  }

  /** A free worker now (warm, or started if under `max`), or undefined. */
  tryAcquire(kind: Isolation): WorkerHost | undefined {
    if (this.#kinds[kind].waiters.size > 0) return undefined;
    return this.#take(kind);
  }

  enqueue(kind: Isolation, waiter: WorkerWaiter): void {
    this.#kinds[kind].waiters.push(waiter);
  }

  /** Leaves the wait; false if the waiter was already granted. */
  withdraw(kind: Isolation, waiter: WorkerWaiter): boolean {
    return this.#kinds[kind].waiters.remove(waiter);
  }

  /** A worker whose process has ended goes to the next waiter, or back to the idle list. */
  release(host: WorkerHost): void {
    if (!host.alive) return;
    const kind = this.#kinds[host.kind];
    const waiter = kind.waiters.shift();
    if (waiter !== undefined) waiter.workerGranted(host);
    else kind.idle.push(host);
  }

  /** A worker died or was stopped: a fresh one replaces it for the next waiter. */
  lost(host: WorkerHost): void {
    if (!this.#all.delete(host)) return;
    const kind = this.#kinds[host.kind];
    kind.live--;
    const at = kind.idle.indexOf(host);
    if (at >= 0) kind.idle.splice(at, 1);
    if (kind.waiters.size > 0) {
      const fresh = this.#take(host.kind);
      if (fresh !== undefined) kind.waiters.shift()!.workerGranted(fresh);
    }
  }

  /** Remembers a stop in progress, so that dispose waits for it. */
  track(stopping: Promise<void>): void {
    this.#stopping.add(stopping);
    stopping.finally(() => this.#stopping.delete(stopping));
  }

  /** Stops every worker; resolves once all are gone. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    for (const host of [...this.#all]) host.stop();
    await Promise.all([...this.#stopping]);
  }

  #take(kind: Isolation): WorkerHost | undefined {
    const pool = this.#kinds[kind];
    const warm = pool.idle.pop();
    if (warm !== undefined) return warm;
    if (pool.live >= this.max || this.#disposed) return undefined;
    pool.live++;
    const host = new WorkerHost(this, kind);
    this.#all.add(host);
    return host;
  }
}
