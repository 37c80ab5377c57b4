// One row of bench:fleet for one library: N fresh OS processes
// (_fleet_worker.ts) on one key of the private redis-server, started
// together, their holds merged, and what Redis counted meanwhile.
import type { Redis } from "ioredis";
import type { Hold, Window } from "./_fleet_analysis.ts";
import type { Library } from "./_fleet_limiters.ts";
import { type CommandCounts, commandCounts, cpuSeconds, resetStats } from "./_fleet_redis.ts";
import type { Go, Plan, WorkerReport } from "./_fleet_worker.ts";

const WORKER = new URL("./_fleet_worker.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;
/** Starting a Deno process that loads a Redis client takes seconds on a busy machine. */
const START_LIMIT_MS = 60_000;
/** Between the go and the first job: every process has read its go by then. */
const GO_LEAD_MS = 300;
/** Load rows: the first part of the run is warm-up, left out of the figures. */
const WARM_UP_MS = 500;
/** The idle row: holders take every slot, then waiters queue, then the quiet window opens. */
const QUEUE_AFTER_MS = 1_000;
const WINDOW_AFTER_MS = 2_000;
const RELEASE_AFTER_WINDOW_MS = 500;

export interface RowSpec {
  /** Names the key, with the library. */
  name: string;
  limit: number;
  /** Each process's own bound (procpool's maxProcesses). */
  local: number;
  load?: Plan["load"];
  idle?: Plan["idle"];
  /** Load rows: how long jobs keep starting. The idle row: how long the quiet window lasts. */
  ms: number;
}

export interface RowRun {
  /** Every process's jobs (the idle row: the holders'), merged. */
  holds: Hold[];
  /** The idle row: the waiters' jobs. */
  waited: Hold[];
  errors: string[];
  errorCount: number;
  /** Load rows: from the go to the last exit. The idle row: the quiet window only. */
  commands: CommandCounts;
  /** Redis CPU seconds over the same span as `commands`. */
  cpu: number;
  /** Load rows: the measured part of the run. The idle row: the quiet window. µs. */
  window: Window;
}

export async function runRow(
  redis: Redis,
  port: number,
  library: Library,
  spec: RowSpec,
  processes: number,
): Promise<RowRun> {
  const plan: Plan = {
    library,
    port,
    key: `fleet:${spec.name}:${library}`,
    limit: spec.limit,
    local: spec.local,
    load: spec.load,
    idle: spec.idle,
  };
  const workers = Array.from({ length: processes }, () => new Worker(plan));
  try {
    await Promise.all(workers.map((worker) => worker.ready()));
    await resetStats(redis);
    let cpuBefore = await cpuSeconds(redis);
    const startAt = Date.now() + GO_LEAD_MS;
    const go: Go = {
      startAt,
      endAt: startAt + spec.ms,
      waitAt: startAt + QUEUE_AFTER_MS,
      releaseAt: startAt + WINDOW_AFTER_MS + spec.ms + RELEASE_AFTER_WINDOW_MS,
    };
    await Promise.all(workers.map((worker) => worker.go(go)));
    let window: Window;
    let commands: CommandCounts | undefined;
    let cpu = 0;
    if (spec.idle) {
      const from = startAt + WINDOW_AFTER_MS;
      await sleepUntil(from);
      await resetStats(redis);
      cpuBefore = await cpuSeconds(redis);
      await sleepUntil(from + spec.ms);
      cpu = await cpuSeconds(redis) - cpuBefore;
      commands = await commandCounts(redis);
      window = { from: from * 1000, to: (from + spec.ms) * 1000 };
    } else {
      window = { from: (startAt + WARM_UP_MS) * 1000, to: go.endAt * 1000 };
    }
    const reports = await Promise.all(workers.map((worker) => worker.report(spec.ms)));
    if (!commands) {
      cpu = await cpuSeconds(redis) - cpuBefore;
      commands = await commandCounts(redis);
    }
    const tag = (proc: number) => ([start, end]: [number, number]): Hold => ({ proc, start, end });
    return {
      holds: reports.flatMap((report, proc) => report.holds.map(tag(proc))),
      waited: reports.flatMap((report, proc) => report.waited.map(tag(proc))),
      errors: reports.flatMap((report) => report.errors),
      errorCount: reports.reduce((sum, report) => sum + report.errorCount, 0),
      commands,
      cpu,
      window,
    };
  } finally {
    for (const worker of workers) worker.kill();
    await Promise.all(workers.map((worker) => worker.child.status));
  }
}

function sleepUntil(atMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, atMs - Date.now())));
}

/** A _fleet_worker.ts process, spoken to by lines. */
class Worker {
  readonly child: Deno.ChildProcess;
  readonly #lines: AsyncIterator<string>;
  readonly #stderr: Promise<string>;

  constructor(plan: Plan) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--config",
        CONFIG,
        "--allow-net=127.0.0.1",
        "--allow-env",
        "--allow-read",
        WORKER,
        JSON.stringify(plan),
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#lines = lines(this.child.stdout);
    this.#stderr = new Response(this.child.stderr).text();
  }

  async ready(): Promise<void> {
    const line = await this.#line("ready", START_LIMIT_MS);
    if (line !== "ready") throw new Error(`expected "ready", got ${JSON.stringify(line)}`);
  }

  async go(go: Go): Promise<void> {
    const writer = this.child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(`go ${JSON.stringify(go)}\n`));
    await writer.close();
  }

  async report(rowMs: number): Promise<WorkerReport> {
    // The idle row also waits WINDOW_AFTER_MS before its window and drains afterwards.
    return JSON.parse(await this.#line("its report", rowMs + 60_000));
  }

  kill(): void {
    try {
      this.child.kill("SIGKILL");
    } catch {
      // Already exited.
    }
  }

  async #line(what: string, limitMs: number): Promise<string> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no ${what} within ${limitMs} ms`)), limitMs);
    });
    try {
      const { value, done } = await Promise.race([this.#lines.next(), late]);
      if (done) throw new Error(`worker ended before ${what}:\n${await this.#stderr}`);
      return value;
    } finally {
      clearTimeout(timer);
    }
  }
}

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    for (let at; (at = buffer.indexOf("\n")) >= 0; buffer = buffer.slice(at + 1)) {
      yield buffer.slice(0, at);
    }
  }
  if (buffer !== "") yield buffer;
}
