// A "process" worker: a Deno child process running process_main.ts, with
// the channel on its stdin and stdout and its stderr inherited.
import { WorkerCrashedError } from "../errors.ts";
import { frame, FrameReader } from "./_frames.ts";
import type { Batch, FromWorker, ToWorker } from "./protocol.ts";
import { decodeBatch, encodeBatch } from "./_codec.ts";
import type { Transport, TransportEvents } from "./_transport.ts";

const ENTRY = new URL("./process_main.ts", import.meta.url).href;
const PERMISSIONS = ["read", "write", "net", "env", "run", "ffi", "sys", "import"] as const;

let childArgs: string[] | undefined;

/** The permissions this process was granted in full, passed on; and its config file. */
function argsForChild(): string[] {
  if (childArgs !== undefined) return childArgs;
  const args = ["run", "--no-prompt"];
  for (const name of PERMISSIONS) {
    try {
      if (Deno.permissions.querySync({ name } as Deno.PermissionDescriptor).state === "granted") {
        args.push(`--allow-${name}`);
      }
    } catch {
      // A permission this Deno does not know.
    }
  }
  const config = findConfig();
  if (config !== undefined) args.push("--config", config);
  args.push(ENTRY);
  return childArgs = args;
}

/** The deno.json a `deno run` of the main module would have found (the worker's imports need it). */
function findConfig(): string | undefined {
  try {
    let dir = Deno.mainModule.startsWith("file:")
      ? new URL(".", Deno.mainModule).pathname
      : Deno.cwd();
    for (;;) {
      for (const name of ["deno.json", "deno.jsonc"]) {
        const path = `${dir.replace(/\/$/, "")}/${name}`;
        try {
          if (Deno.statSync(path).isFile) return path;
        } catch {
          // not here
        }
      }
      const parent = new URL("..", `file://${dir.endsWith("/") ? dir : `${dir}/`}`).pathname;
      if (parent === dir || parent === `${dir}/` || dir === "/") return undefined;
      dir = parent;
    }
  } catch {
    return undefined;
  }
}

export class ProcessTransport implements Transport {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #gone: Promise<void>;
  #expected = false;

  constructor(events: TransportEvents) {
    const child = this.#child = new Deno.Command(Deno.execPath(), {
      args: argsForChild(),
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    let refused: unknown = undefined;
    const reader = new FrameReader((payload) => {
      try {
        events.batch(decodeBatch<FromWorker>(payload));
      } catch (error) {
        refused = error;
        throw error;
      }
    });
    const reading = (async () => {
      try {
        for await (const chunk of child.stdout) reader.push(chunk);
      } catch (error) {
        // The pipe broke (the status below says why), or the runtime could not
        // take a frame: the worker is then stopped and its run fails with why.
        if (error !== refused) return;
        if (this.#expected) return;
        this.#expected = true;
        try {
          child.kill("SIGKILL");
        } catch {
          // It had already exited.
        }
        const crash = new WorkerCrashedError(
          `the worker's OS process ${child.pid} sent what the runtime could not take: ${
            error instanceof Error ? error.message : String(error)
          }`,
          { cause: error },
        );
        // Reported once reaped, as the exits below are: whoever hears of the
        // crash finds no process of it left.
        await child.status;
        events.crashed(crash);
      }
    })();
    this.#gone = Promise.all([this.#child.status, reading]).then(([status]) => {
      if (this.#expected) return;
      this.#expected = true;
      const how = status.signal !== null
        ? `was killed by ${status.signal}`
        : `exited with code ${status.code}`;
      events.crashed(
        new WorkerCrashedError(`the worker's OS process ${this.#child.pid} ${how}`),
      );
    });
  }

  get pid(): number {
    return this.#child.pid;
  }

  post(batch: Batch<ToWorker>): void {
    const bytes = frame(encodeBatch(batch));
    // A write to a process that died fails; its exit is reported above.
    this.#writer.write(bytes).catch(() => {});
  }

  async kill(): Promise<void> {
    if (!this.#expected) {
      this.#expected = true;
      try {
        this.#child.kill("SIGKILL");
      } catch {
        // It had already exited.
      }
    }
    this.#writer.close().catch(() => {});
    await this.#gone;
  }
}
