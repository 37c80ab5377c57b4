/**
 * A status line for the examples. On a terminal it is redrawn in place
 * (carriage return, then ANSI "erase line"); when the output goes to a pipe or
 * a file it becomes a plain line every `plainEveryMs`, so logs stay readable.
 *
 * @module
 */

const ERASE_LINE = "\r\x1b[2K";
const encoder = new TextEncoder();

function write(text: string): void {
  const bytes = encoder.encode(text);
  let written = 0;
  // writeSync may write fewer bytes than asked; loop until all are out.
  while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
}

/** Options for {@linkcode ProgressLine}. */
export interface ProgressOptions {
  /** Redraw period on a terminal, in ms. Default 100. */
  liveEveryMs?: number;
  /** Period of plain lines when the output is not a terminal, in ms. Default 1000. */
  plainEveryMs?: number;
  /** Force live or plain mode (default: live only if stdout is a terminal). */
  live?: boolean;
}

/** A line that shows `render()` until stopped. */
export class ProgressLine {
  readonly live: boolean;
  readonly #render: () => string;
  readonly #everyMs: number;
  #timer: ReturnType<typeof setInterval> | undefined = undefined;
  #drawn = false;

  constructor(render: () => string, options: ProgressOptions = {}) {
    this.live = options.live ?? Deno.stdout.isTerminal();
    this.#render = render;
    this.#everyMs = this.live ? options.liveEveryMs ?? 100 : options.plainEveryMs ?? 1000;
  }

  /** Starts redrawing (or printing plain lines). */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), this.#everyMs);
  }

  /**
   * Erases the live line so that something else (a log record) can be
   * printed; the next tick draws it again. A no-op in plain mode.
   */
  clear(): void {
    if (this.live && this.#drawn) {
      write(ERASE_LINE);
      this.#drawn = false;
    }
  }

  /** Stops the timer and leaves the final state on its own line. */
  stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#draw();
    if (this.live) write("\n");
    this.#drawn = false;
  }

  #draw(): void {
    if (this.live) {
      write(`${ERASE_LINE}${this.#render()}`);
      this.#drawn = true;
    } else {
      write(`${this.#render()}\n`);
    }
  }
}
