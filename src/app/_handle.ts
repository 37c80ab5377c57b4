// The handle forkProcess and tryForkProcess return: a view of a process
// record that the caller may hold, check, cancel and dispose of, but not
// reach through. The record sits in a private field, so only procpool finds
// it again (recordOf).
import type { ProcessHandle, ProcessStatus } from "./app.ts";
import type { ProcessRecord } from "./process.ts";

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
    this.#record.cancel(reason);
  }

  [Symbol.dispose](): void {
    this.#record.cancel("its handle was disposed");
  }

  [Symbol.asyncDispose](): Promise<void> {
    this.#record.cancel("its handle was disposed");
    return this.#record.stopped();
  }
}

export function handleFor<T>(record: ProcessRecord): ProcessHandle<T> {
  return new Handle<T>(record);
}

/** The record behind a handle of ours, or undefined for anything else. */
export function recordOf(handle: unknown): ProcessRecord | undefined {
  return typeof handle === "object" && handle !== null ? Handle.recordOf(handle) : undefined;
}
