// The test runtime's trace, stored as numbers in columns and turned into
// TraceEvent objects only when read. A million delays then cost a few
// megabytes of flat arrays instead of a million live objects. Columns are
// split into bounded chunks so that growing never copies a huge array, and
// start small so that a short test does not pay for a big one.
import type { RuntimeObserver, TraceEvent } from "../runtime/observer.ts";

const CHUNK_BITS = 14;
const CHUNK = 1 << CHUNK_BITS;

export class TraceLog {
  readonly #ids: number[][] = [];
  readonly #ops: number[][] = [];
  readonly #times: number[][] = [];
  readonly #opNames: string[] = [];
  readonly #opIndex = new Map<string, number>();
  readonly #events: TraceEvent[] = [];
  #length = 0;
  // Runs of one op (a loop of delays) skip the map lookup.
  #lastOp = "";
  #lastOpCode = -1;

  // The chunks being filled, kept at hand: one delay records one event.
  #idChunk: number[] = [];
  #opChunk: number[] = [];
  #timeChunk: number[] = [];

  /** Bound once, so the observer call allocates nothing. */
  readonly record: RuntimeObserver["trace"] = (processId, op, time) => {
    if ((this.#length & (CHUNK - 1)) === 0) {
      this.#ids.push(this.#idChunk = []);
      this.#ops.push(this.#opChunk = []);
      this.#times.push(this.#timeChunk = []);
    }
    let opCode = op === this.#lastOp ? this.#lastOpCode : this.#opIndex.get(op);
    if (opCode === undefined) {
      opCode = this.#opNames.push(op) - 1;
      this.#opIndex.set(op, opCode);
    }
    this.#lastOp = op;
    this.#lastOpCode = opCode;
    this.#idChunk.push(processId);
    this.#opChunk.push(opCode);
    this.#timeChunk.push(time);
    this.#length++;
  };

  /** How many events were recorded. */
  get length(): number {
    return this.#length;
  }

  /** Every event so far, as objects (the same array each time, grown as needed). */
  get events(): readonly TraceEvent[] {
    const events = this.#events;
    for (let i = events.length; i < this.#length; i++) {
      const chunk = i >>> CHUNK_BITS, slot = i & (CHUNK - 1);
      events.push({
        processId: this.#ids[chunk][slot],
        op: this.#opNames[this.#ops[chunk][slot]],
        time: this.#times[chunk][slot],
      });
    }
    return events;
  }
}
