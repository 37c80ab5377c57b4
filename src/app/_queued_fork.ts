// A forkProcess call waiting for a slot. It is its own entry in the pool's
// queue, so a queued fork costs one object besides its promise.
import type { LangL } from "../lang/lang.ts";
import { SlotWaiter } from "../runtime/slot_pool.ts";
import type { ProcessHandle } from "./app.ts";
import type { CheckedForkOptions } from "./_options.ts";
import { handleFor } from "./process.ts";
import type { Scope } from "./scope.ts";
import { promiseFor, type Settler } from "../_settler.ts";

export class QueuedFork extends SlotWaiter implements Settler<ProcessHandle<never>> {
  readonly #onAbort: (() => void) | undefined = undefined;
  resolve!: (handle: ProcessHandle<never>) => void;
  reject!: (reason: unknown) => void;
  readonly promise: Promise<ProcessHandle<never>> = promiseFor(this);

  constructor(
    readonly scope: Scope,
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

  slotGranted(): void {
    // Start before leaving: the scope must never look idle in between.
    const record = this.scope.startProcess(this.process, this.options);
    this.#leave();
    this.resolve(handleFor(record));
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
