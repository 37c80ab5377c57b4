// The test runtime's trace, stored in fixed-size typed-array chunks and turned
// into TraceEvent objects only when read. A million delays then cost a few
// megabytes of flat memory instead of a million live objects (and no copying
// of ever-larger arrays as the trace grows).
import type { RuntimeObserver, TraceEvent } from "../runtime/observer.ts";

const CHUNK_BITS = 14;
const CHUNK = 1 << CHUNK_BITS;

export class TraceLog {
  readonly #ids: Float64Array[] = [];
  readonly #ops: Uint8Array[] = [];
  readonly #times: Float64Array[] = [];
  readonly #opNames: string[] = [];
  readonly #opIndex = new Map<string, number>();
  readonly #events: TraceEvent[] = [];
  #length = 0;

  /** Bound once, so the observer call allocates nothing. */
  readonly record: RuntimeObserver["trace"] = (processId, op, time) => {
    const slot = this.#length & (CHUNK - 1);
    if (slot === 0) {
      this.#ids.push(new Float64Array(CHUNK));
      this.#ops.push(new Uint8Array(CHUNK));
      this.#times.push(new Float64Array(CHUNK));
    }
    const chunk = this.#length >>> CHUNK_BITS;
    let opCode = this.#opIndex.get(op);
    if (opCode === undefined) {
      opCode = this.#opNames.push(op) - 1;
      this.#opIndex.set(op, opCode);
    }
    this.#ids[chunk][slot] = processId;
    this.#ops[chunk][slot] = opCode;
    this.#times[chunk][slot] = time;
    this.#length++;
  };

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
