// The handle forkProcess and tryForkProcess return: a view of a process
// record that the caller may hold, check, cancel and dispose of, but not
// reach through. The record sits in a private field, so only procpool finds
// it again (recordOf).
import { processLabel } from "../errors/_process_label.ts";
import type { ProcessHandle, ProcessStatus } from "./app.ts";
import type { ProcessRecord } from "./process.ts";
import { isRunningScript } from "./_guard.ts";
import { detachedCall } from "../_validate.ts";
import { stoppedPromise } from "./_process_stop.ts";
import { FORKED_MAP_KEEPER } from "./_records.ts";

class Handle<T> implements ProcessHandle<T> {
  readonly #record: ProcessRecord;

  constructor(record: ProcessRecord) {
    this.#record = record;
  }

  static recordOf(value: object): ProcessRecord | undefined {
    return #record in value ? (value as Handle<unknown>).#record : undefined;
  }

  get id(): number {
    return this.#record.id;
  }

  get name(): string | undefined {
    return this.#record.name;
  }

  get status(): ProcessStatus {
    return this.#record.status;
  }

  cancel(reason?: unknown): void {
    Handle.#of(this, "cancel").cancel(reason);
  }

  [Symbol.dispose](): void {
    Handle.#of(this, "[Symbol.dispose]").cancel("its handle was disposed");
  }

  [Symbol.asyncDispose](): Promise<void> {
    let record: ProcessRecord;
    try {
      record = Handle.#of(this, "[Symbol.asyncDispose]");
    } catch (error) {
      return Promise.reject(error);
    }
    // Waiting for itself to stop would never end.
    if (record.status === "running" && isRunningScript(record)) {
      return Promise.reject(
        new TypeError(
          `${
            processLabel(record.id, record.name)
          } awaited its own handle's [Symbol.asyncDispose], which waits ` +
            "until the process has stopped: it would wait for itself forever. To stop, return " +
            "or throw; to request cancellation only, call handle.cancel() or [Symbol.dispose]().",
        ),
      );
    }
    record.cancel("its handle was disposed");
    return stoppedPromise(record);
  }

  static #of(handle: Handle<unknown> | undefined, method: string): ProcessRecord {
    if (typeof handle !== "object" || handle === null || !(#record in handle)) {
      throw detachedCall("handle", method);
    }
    return handle.#record;
  }
}

export function handleFor<T>(record: ProcessRecord): ProcessHandle<T> {
  return new Handle<T>(record);
}

/** The record behind a handle of ours, or undefined for anything else. */
export function recordOf(handle: unknown): ProcessRecord | undefined {
  return typeof handle === "object" && handle !== null ? Handle.recordOf(handle) : undefined;
}

/**
 * A handle kept for the module's life, so that a full GC that finds no other
 * keeps its hidden class and the code optimised for it (see MAP_KEEPER in
 * _records.ts).
 */
export const HANDLE_MAP_KEEPER: ProcessHandle<unknown> = new Handle(FORKED_MAP_KEEPER);
