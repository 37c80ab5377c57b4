// A forkProcess call waiting for a slot. It is its own entry in the pool's
// queue, so a queued fork costs one object besides its promise.
import type { LangL } from "../lang/lang.ts";
import { SlotWaiter } from "../runtime/slot_pool.ts";
import type { ProcessHandle } from "./app.ts";
import type { CheckedForkOptions } from "./_options.ts";
import { handleFor, type ProcessRecord } from "./process.ts";
import type { Scope } from "./scope.ts";
import { promiseFor, type Settler } from "../_settler.ts";

// The grant is delivered through a promise reaction registered when the fork
// was queued, so that the script runs in the forker's async context (request
// ids, tracing and log contexts reach it), not in the context of whichever
// process happened to release the slot.
function runGranted(fork: QueuedFork): ProcessHandle<never> {
  const record = fork.record!;
  record.invoke(fork.process);
  return handleFor(record);
}

export class QueuedFork extends SlotWaiter implements Settler<QueuedFork> {
  readonly #onAbort: (() => void) | undefined = undefined;
  resolve!: (fork: QueuedFork) => void;
  reject!: (reason: unknown) => void;
  /** What forkProcess returns: settles with the handle once the script runs. */
  readonly promise: Promise<ProcessHandle<never>> = promiseFor(this).then(runGranted);
  record: ProcessRecord | undefined = undefined;

  constructor(
    scope: Scope,
    readonly process: (lang: LangL) => unknown,
    readonly options: CheckedForkOptions,
  ) {
    super(scope);
    scope.core.slots.enqueue(this);
    scope.workStarted();
    const signal = options.signal;
    if (signal !== undefined) {
      this.#onAbort = () => {
        if (scope.core.slots.withdraw(this)) this.withdrawn(signal.reason);
      };
      signal.addEventListener("abort", this.#onAbort, { once: true });
    }
  }

  /** The owner the pool knows, as the scope it is (not stored twice). */
  get scope(): Scope {
    return this.owner as Scope;
  }

  slotGranted(): void {
    // Admit before leaving: the scope must never look idle in between.
    this.record = this.scope.admitProcess(this.options);
    this.#leave();
    this.resolve(this);
  }

  /** Called once the pool has let go of this waiter. */
  withdrawn(reason: unknown): void {
    this.#leave();
    this.reject(reason);
  }

  #leave(): void {
    if (this.#onAbort !== undefined) {
      this.options.signal!.removeEventListener("abort", this.#onAbort);
    }
    this.scope.workEnded();
  }
}
