// A one-way channel of text frames in a SharedArrayBuffer, between a thread
// and one of its Web Workers. Deno's postMessage costs ~40 µs of CPU per
// message on each side (measured: host and worker), most of a tiny worker
// run; writing the frame into shared memory and ringing a doorbell
// (Atomics.notify, waited on with Atomics.waitAsync, which blocks neither
// event loop) costs a few. One writer, one reader.
import { setImmediate } from "node:timers";

/**
 * Header slots (Int32): bytes written so far, bytes read so far, doorbell,
 * batches the writer sent as messages instead (a reader blocked on the ring
 * must not wait for frames while a message waits in its event loop), batches
 * the reader has taken, frames and messages (a writer held back waits on it).
 */
const WRITE = 0;
const READ = 1;
const BELL = 2;
const POSTED = 3;
const TAKEN = 4;
const HEADER_BYTES = 32;

/**
 * How long `listen` may go on reading without letting its thread's event
 * loop turn (timers, I/O) while the writer keeps ringing.
 */
export const LISTEN_TURN_MS = 2;
/** A length word that says "the frame is at the start of the buffer". */
const WRAP = -1;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class FrameRing {
  readonly #header: Int32Array;
  readonly #bytes: Uint8Array;
  readonly #words: Int32Array;
  readonly #capacity: number;
  /** Where a frame is encoded before it is known to fit (not shared). */
  #scratch = new Uint8Array(256);

  /** A ring with `capacity` bytes of frames (a power of two). */
  static create(capacity: number): FrameRing {
    return new FrameRing(new SharedArrayBuffer(HEADER_BYTES + capacity));
  }

  constructor(readonly buffer: SharedArrayBuffer) {
    this.#capacity = buffer.byteLength - HEADER_BYTES;
    this.#header = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    this.#bytes = new Uint8Array(buffer, HEADER_BYTES, this.#capacity);
    this.#words = new Int32Array(buffer, HEADER_BYTES, this.#capacity / 4);
  }

  #tooLarge = false;

  /**
   * The longest frame (in UTF-16 code units) `tryWrite` may take: half the
   * ring with its 4-byte length, so that a frame always fits once the reader
   * caught up, wherever the write position is (a frame that does not fit in
   * the tail skips it, and tail + frame must not exceed the ring).
   */
  get frameLimit(): number {
    return this.#capacity / 2 - 4;
  }

  /**
   * Whether the last `tryWrite` that failed did so because its frame is over
   * `frameLimit`, in characters or in UTF-8 bytes: it would not fit an empty
   * ring either.
   */
  get tooLarge(): boolean {
    return this.#tooLarge;
  }

  /** Writes `text` as one frame and rings; false (nothing written) if it does not fit now. */
  tryWrite(text: string): boolean {
    const limit = this.#capacity / 2 - 4;
    this.#tooLarge = true;
    if (text.length > limit) return false;
    const room = Math.min(limit, text.length * 3);
    if (room > this.#scratch.length) this.#scratch = new Uint8Array(room);
    const { read, written } = encoder.encodeInto(text, this.#scratch);
    if (read < text.length || written > limit) return false;
    this.#tooLarge = false;
    const need = 4 + ((written + 3) & ~3);
    let write = Atomics.load(this.#header, WRITE) >>> 0;
    const free = this.#capacity - ((write - (Atomics.load(this.#header, READ) >>> 0)) >>> 0);
    let at = write & (this.#capacity - 1);
    const tail = this.#capacity - at;
    if (need > tail) {
      // Frames never wrap: the reader skips the tail and reads from the start.
      if (tail + need > free) return false;
      this.#words[at >> 2] = WRAP;
      write = (write + tail) >>> 0;
      at = 0;
    } else if (need > free) return false;
    this.#words[at >> 2] = written;
    this.#bytes.set(this.#scratch.subarray(0, written), at + 4);
    // The atomic store publishes the frame's bytes to the reader's atomic load.
    Atomics.store(this.#header, WRITE, (write + need) | 0);
    this.ring();
    return true;
  }

  /** Wakes the reader (it also checks its other ways in: a batch sent as a message). */
  ring(): void {
    Atomics.add(this.#header, BELL, 1);
    Atomics.notify(this.#header, BELL);
  }

  /** Counts a batch sent as a message instead of a frame, and rings. */
  postedOne(): void {
    Atomics.add(this.#header, POSTED, 1);
    this.ring();
  }

  /** Batches sent as messages so far (see `postedOne`). */
  get posted(): number {
    return Atomics.load(this.#header, POSTED);
  }

  /** The doorbell's count now, for `waitSync`. */
  get bell(): number {
    return Atomics.load(this.#header, BELL);
  }

  /** Whether a frame is waiting to be read. */
  get pending(): boolean {
    return Atomics.load(this.#header, READ) !== Atomics.load(this.#header, WRITE);
  }

  /**
   * Blocks this thread until the bell rings after `seen` or `ms` pass; true if
   * it rang. Only for a worker thread with nothing else to do (a Worker's
   * terminate() still interrupts it).
   */
  waitSync(seen: number, ms: number): boolean {
    return Atomics.wait(this.#header, BELL, seen, ms) !== "timed-out";
  }

  /** Batches the reader has taken so far (wraps as an Int32). */
  get taken(): number {
    return Atomics.load(this.#header, TAKEN);
  }

  /** The reader took `count` batches (frames or messages): a writer held back may go on. */
  took(count: number): void {
    Atomics.add(this.#header, TAKEN, count);
    Atomics.notify(this.#header, TAKEN);
  }

  /**
   * Blocks this thread until the reader has taken more than `seen` batches or
   * `ms` pass; true if it took some. Only for a worker thread (see waitSync).
   */
  waitTaken(seen: number, ms: number): boolean {
    return Atomics.wait(this.#header, TAKEN, seen, ms) !== "timed-out";
  }

  /**
   * Reads every frame written so far, in order, and counts them taken. An
   * `onFrame` that throws does not stop the reading: the frames after it
   * are read too and every frame read is counted taken (a writer held back
   * waits on that count); the first error is rethrown at the end (several:
   * an AggregateError).
   */
  readAll(onFrame: (text: string) => void): void {
    let read = Atomics.load(this.#header, READ) >>> 0;
    const write = Atomics.load(this.#header, WRITE) >>> 0;
    let frames = 0;
    let errors: unknown[] | undefined;
    while (read !== write) {
      const at = read & (this.#capacity - 1);
      const length = this.#words[at >> 2];
      if (length === WRAP) {
        read = (read + this.#capacity - at) >>> 0;
        continue;
      }
      // A copy: TextDecoder is not required to read shared memory.
      const text = decoder.decode(this.#bytes.slice(at + 4, at + 4 + length));
      read = (read + 4 + ((length + 3) & ~3)) >>> 0;
      Atomics.store(this.#header, READ, read | 0);
      frames++;
      try {
        onFrame(text);
      } catch (error) {
        (errors ??= []).push(error);
      }
    }
    if (frames > 0) this.took(frames);
    if (errors !== undefined) rethrowAll(errors, "frames could not be handled");
  }

  /**
   * Calls `onBell` now and after every ring until stopped, without blocking
   * the event loop (a promise `onBell` returns is awaited first). An error
   * `onBell` throws is reported (reportError) as an uncaught error of this
   * thread would be, and the listening goes on. A writer that keeps ringing
   * does not starve this thread: every LISTEN_TURN_MS the event loop turns
   * (a bell already rung is answered without one).
   */
  listen(onBell: () => void | Promise<void>): () => void {
    let stopped = false;
    const header = this.#header;
    const loop = async () => {
      let turned = performance.now();
      while (!stopped) {
        if (performance.now() - turned > LISTEN_TURN_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          turned = performance.now();
          if (stopped) return;
        }
        const seen = Atomics.load(header, BELL);
        try {
          const pending = onBell();
          if (pending !== undefined) await pending;
        } catch (error) {
          reportError(error);
        }
        if (stopped) return;
        const wait = Atomics.waitAsync(header, BELL, seen);
        if (wait.async) {
          await wait.value;
          turned = performance.now();
        }
      }
    };
    loop();
    return () => {
      stopped = true;
      // Wakes the pending wait, so that nothing is left waiting.
      this.ring();
    };
  }
}

/**
 * Throws what a loop that went on past its errors collected: the one error,
 * or all of them as an AggregateError ("<count> <what>").
 */
export function rethrowAll(errors: readonly unknown[], what: string): never {
  if (errors.length === 1) throw errors[0];
  throw new AggregateError(errors, `${errors.length} ${what}`);
}
