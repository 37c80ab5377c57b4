// A forkAll item's process: a record that also knows its batch and its index.
// A subclass rather than two fields of every record, which every
// forkProcess would pay for without using.
import type { ScriptLane } from "./_guard.ts";
import { type ProcessBatch, type ProcessOwner, ProcessRecord } from "./process.ts";

/** A new process record, an item's if it has a batch. */
export function newRecord(
  owner: ProcessOwner,
  id: number,
  name: string | undefined,
  batch: ProcessBatch | undefined,
  index: number,
): ProcessRecord {
  return batch === undefined
    ? new ProcessRecord(owner, id, name)
    : new ItemRecord(owner, id, name, batch, index);
}

export class ItemRecord extends ProcessRecord {
  readonly #batch: ProcessBatch;

  constructor(
    owner: ProcessOwner,
    id: number,
    name: string | undefined,
    batch: ProcessBatch,
    /** The item's index in its batch. */
    readonly tag: number,
  ) {
    super(owner, id, name);
    this.#batch = batch;
  }

  override get batch(): ProcessBatch {
    return this.#batch;
  }

  /** The lane the script runs in (forkAll over an array). */
  get lane(): ScriptLane | undefined {
    return this.#batch.lane;
  }
}
