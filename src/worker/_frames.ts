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

  constructor(readonly onFrame: (payload: Uint8Array) => void) {}

  push(chunk: Uint8Array): void {
    let buffer = this.#buffer.length === 0 ? chunk : concat(this.#buffer, chunk);
    while (buffer.length >= 4) {
      const length = new DataView(buffer.buffer, buffer.byteOffset, 4).getUint32(0, true);
      if (buffer.length < 4 + length) break;
      const payload = buffer.subarray(4, 4 + length);
      buffer = buffer.subarray(4 + length);
      this.onFrame(payload);
    }
    this.#buffer = buffer.length === 0 ? new Uint8Array(0) : buffer.slice();
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(a.length + b.length);
  bytes.set(a);
  bytes.set(b, a.length);
  return bytes;
}
