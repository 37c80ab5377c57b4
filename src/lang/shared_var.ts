// The interpreter's side of a SharedVar: the value and a FIFO promise mutex.
// A released lock is handed straight to the longest waiter, so a stream of
// newcomers can never starve it.
import { LinkedQueue, QueueNode } from "../_linked_queue.ts";
import type { SharedVar } from "./lang.ts";
import { addLockWait, deadlockFor, type LockHolder, removeLockWait } from "./_lock_graph.ts";

/**
 * A variable's value is data. A Promise can never resolve to a thenable (it
 * adopts it instead), so a variable holding one could not be read: reading
 * would wait for it, forever if it never settles. Thenables are refused where
 * values enter a variable.
 */
export function requireData(argument: string, value: unknown): void {
  if (isThenable(value)) {
    throw new TypeError(
      `${argument} must not be a Promise or other thenable (a variable's value is data, ` +
        `and reading it would wait for the thenable); await it first or wrap it ` +
        `({ promise }), got ${value instanceof Promise ? "a Promise" : "a thenable"}`,
    );
  }
}

function isThenable(value: unknown): boolean {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return false;
  try {
    return typeof (value as { then?: unknown }).then === "function";
  } catch {
    // A value whose `then` cannot even be looked up (a revoked Proxy) is data.
    return false;
  }
}

class LockWaiter extends QueueNode {
  constructor(
    readonly holder: LockHolder,
    readonly resolve: () => void,
    readonly reject: (reason: unknown) => void,
  ) {
    super();
  }
}

export class VarCell<T> implements SharedVar<T> {
  /** The LangL interpreter holding the lock, if any. */
  holder: LockHolder | undefined = undefined;
  readonly #waiters = new LinkedQueue<LockWaiter>();

  constructor(
    readonly id: number,
    /** The runtime this variable belongs to. */
    readonly owner: object,
    public value: T,
  ) {}

  /** Locks without waiting, or returns false. */
  tryLock(holder: LockHolder): boolean {
    if (this.holder !== undefined) return false;
    this.holder = holder;
    return true;
  }

  /**
   * Waits in line for the lock; rejects with `signal.reason` on abort, and at
   * once with DeadlockError if this wait would close a cycle of waits.
   */
  lock(holder: LockHolder, signal: AbortSignal): Promise<void> {
    if (this.tryLock(holder)) return Promise.resolve();
    if (signal.aborted) return Promise.reject(signal.reason);
    const deadlock = deadlockFor(holder, this);
    if (deadlock !== undefined) return Promise.reject(deadlock);
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        if (!this.#waiters.remove(waiter)) return;
        removeLockWait(holder, this);
        reject(signal.reason);
      };
      const waiter = new LockWaiter(holder, () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, reject);
      this.#waiters.push(waiter);
      addLockWait(holder, this);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  unlock(): void {
    const next = this.#waiters.shift();
    this.holder = next?.holder;
    if (next !== undefined) {
      removeLockWait(next.holder, this);
      next.resolve();
    }
  }
}
