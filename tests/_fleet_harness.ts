// What the fleet tests share: a child Deno process that prints lines (its
// output read continuously, so a chatty child never blocks on a full pipe),
// and arithmetic on hold intervals in wall-clock µs, which are comparable
// across processes on one host.
import { within } from "./_redis_fixture.ts";

/** Starting a Deno process that loads ioredis takes a while on a busy machine. */
export const START_LIMIT_MS = 60_000;

/** Wall-clock ms, comparable across processes on one host. */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

/** In a child: waits for "go <endAtMs>" on stdin; returns endAtMs. */
export async function readGo(): Promise<number> {
  const reader = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("stdin closed before go");
    text += value;
  }
  reader.releaseLock();
  const [word, endAt] = text.trim().split(" ");
  if (word !== "go") throw new Error(`expected "go <endAtMs>", got ${JSON.stringify(text)}`);
  return Number(endAt);
}

/** A child `deno run` of `script` with its options as JSON, talking in lines. */
export class FleetChild {
  readonly child: Deno.ChildProcess;
  readonly stderr: Promise<string>;
  readonly #lines: string[] = [];
  #read = 0;
  #ended = false;
  #notify: (() => void) | undefined;
  readonly #reading: Promise<void>;

  constructor(script: string, options: unknown) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-net=127.0.0.1",
        "--allow-env",
        "--allow-read",
        script,
        JSON.stringify(options),
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.stderr = new Response(this.child.stderr).text();
    this.#reading = this.#readAll();
  }

  /** The next line not yet taken; fails if the child ends first or nothing comes in time. */
  async line(what: string, ms = START_LIMIT_MS): Promise<string> {
    const next = async (): Promise<string> => {
      while (this.#read >= this.#lines.length) {
        if (this.#ended) throw new Error(`child ended before ${what}: ${await this.stderr}`);
        await new Promise<void>((resolve) => this.#notify = resolve);
      }
      return this.#lines[this.#read++];
    };
    return await within(next(), ms, what);
  }

  /** Sends one line to the child's stdin (which stays open). */
  async send(text: string): Promise<void> {
    const writer = this.child.stdin.getWriter();
    try {
      await writer.write(new TextEncoder().encode(text + "\n"));
    } finally {
      writer.releaseLock();
    }
  }

  /** Kills the process with SIGKILL if it still runs. */
  kill(): void {
    try {
      this.child.kill("SIGKILL");
    } catch {
      // It has ended already.
    }
  }

  /** Closes stdin, waits for the process to end and for its output to be read. */
  async finish(): Promise<Deno.CommandStatus> {
    await this.child.stdin.close().catch(() => {});
    const status = await this.child.status;
    await this.#reading;
    await this.stderr;
    return status;
  }

  async #readAll(): Promise<void> {
    let buffer = "";
    try {
      for await (const chunk of this.child.stdout.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        for (let at; (at = buffer.indexOf("\n")) >= 0; buffer = buffer.slice(at + 1)) {
          this.#lines.push(buffer.slice(0, at));
        }
        this.#wake();
      }
      if (buffer !== "") this.#lines.push(buffer);
    } finally {
      this.#ended = true;
      this.#wake();
    }
  }

  #wake(): void {
    const notify = this.#notify;
    this.#notify = undefined;
    notify?.();
  }
}

/** An interval [start, end] in wall-clock µs. */
export type Interval = readonly [number, number];

/** The most intervals open at one instant (an end at t comes before a start at t). */
export function maxConcurrent(intervals: readonly Interval[]): number {
  const events = intervals.flatMap(([start, end]) => [[start, 1], [end, -1]] as const);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0, max = 0;
  for (const [, step] of events) max = Math.max(max, open += step);
  return max;
}

/** Held time inside [from, to]. */
export function heldWithin(intervals: readonly Interval[], from: number, to: number): number {
  return intervals.reduce(
    (sum, [s, e]) => sum + Math.max(0, Math.min(e, to) - Math.max(s, from)),
    0,
  );
}
