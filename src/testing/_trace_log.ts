// The test runtime's trace, stored as numbers in typed-array columns and
// turned into TraceEvent objects only when read. Typed arrays keep their
// numbers outside the garbage-collected heap: with plain arrays, the columns
// of a million delays were copied by every scavenge until promoted, and
// recording took 40 % of a 10 000 × 100 virtual-delay run (1.67 s against
// 0.99 s with recording off). Columns are split into chunks so that growing
// never copies a big array; the first chunk starts small and doubles, so that
// a short test does not allocate a full chunk on its first operation.
import type { RuntimeObserver, TraceEvent } from "../runtime/observer.ts";

const CHUNK_BITS = 14;
const CHUNK = 1 << CHUNK_BITS;
const FIRST_CAPACITY = 64;

export class TraceLog {
  readonly #ids: Float64Array[] = [];
  readonly #ops: Uint32Array[] = [];
  readonly #times: Float64Array[] = [];
  readonly #opNames: string[] = [];
  readonly #opIndex = new Map<string, number>();
  readonly #events: TraceEvent[] = [];
  #length = 0;
  /** The length at which the chunk being filled is full. */
  #end = 0;
  // Runs of one op (a loop of delays) skip the map lookup.
  #lastOp = "";
  #lastOpCode = -1;

  // The chunk being filled, kept at hand: one delay records one event.
  #idChunk = new Float64Array(0);
  #opChunk = new Uint32Array(0);
  #timeChunk = new Float64Array(0);

  /** Bound once, so the observer call allocates nothing. */
  readonly record: RuntimeObserver["trace"] = (processId, op, time) => {
    const length = this.#length;
    if (length === this.#end) this.#grow();
    if (op !== this.#lastOp) this.#switchOp(op);
    const slot = length & (CHUNK - 1);
    this.#idChunk[slot] = processId;
    this.#opChunk[slot] = this.#lastOpCode;
    this.#timeChunk[slot] = time;
    this.#length = length + 1;
  };

  #switchOp(op: string): void {
    let opCode = this.#opIndex.get(op);
    if (opCode === undefined) {
      opCode = this.#opNames.push(op) - 1;
      this.#opIndex.set(op, opCode);
    }
    this.#lastOp = op;
    this.#lastOpCode = opCode;
  }

  /** Makes room for one more event: a new chunk, or the first one doubled. */
  #grow(): void {
    const slot = this.#length & (CHUNK - 1);
    const size = slot === 0
      ? (this.#length === 0 ? FIRST_CAPACITY : CHUNK)
      : Math.min(slot * 2, CHUNK);
    const ids = new Float64Array(size);
    const ops = new Uint32Array(size);
    const times = new Float64Array(size);
    if (slot === 0) {
      this.#ids.push(ids);
      this.#ops.push(ops);
      this.#times.push(times);
    } else {
      const chunk = this.#length >>> CHUNK_BITS;
      ids.set(this.#idChunk);
      ops.set(this.#opChunk);
      times.set(this.#timeChunk);
      this.#ids[chunk] = ids;
      this.#ops[chunk] = ops;
      this.#times[chunk] = times;
    }
    this.#idChunk = ids;
    this.#opChunk = ops;
    this.#timeChunk = times;
    this.#end = this.#length - slot + size;
  }

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
