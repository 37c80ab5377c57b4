// Length-prefixed frames over a byte stream (a child process's pipes).

/** `payload` with its 4-byte little-endian length in front. */
export function frame(payload: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(4 + payload.length);
  new DataView(bytes.buffer).setUint32(0, payload.length, true);
  bytes.set(payload, 4);
  return bytes;
}

/** Cuts a stream of chunks back into the frames' payloads. */
export class FrameReader {
  #buffer = new Uint8Array(0);
  /** Chunks of a frame still incomplete, joined once it is (joining each time was quadratic). */
  #parts: Uint8Array[] = [];
  #partsLength = 0;
  /** The length of the frame being gathered (with its prefix). */
  #need = 0;

  constructor(readonly onFrame: (payload: Uint8Array) => void) {}

  push(chunk: Uint8Array): void {
    if (this.#parts.length > 0) {
      this.#parts.push(chunk);
      this.#partsLength += chunk.length;
      if (this.#partsLength < this.#need) return;
      chunk = concat(this.#parts, this.#partsLength);
      this.#parts = [];
    }
    let buffer = this.#buffer.length === 0 ? chunk : concat([this.#buffer, chunk]);
    while (buffer.length >= 4) {
      const length = new DataView(buffer.buffer, buffer.byteOffset, 4).getUint32(0, true);
      if (buffer.length < 4 + length) {
        // Gather the rest before looking again.
        this.#need = 4 + length;
        break;
      }
      const payload = buffer.subarray(4, 4 + length);
      buffer = buffer.subarray(4 + length);
      this.onFrame(payload);
    }
    if (buffer.length >= 4 && buffer.length < this.#need) {
      this.#parts = [buffer.slice()];
      this.#partsLength = buffer.length;
      this.#buffer = new Uint8Array(0);
    } else this.#buffer = buffer.length === 0 ? new Uint8Array(0) : buffer.slice();
  }
}

function concat(parts: readonly Uint8Array[], length = parts.reduce((n, p) => n + p.length, 0)) {
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes;
}
