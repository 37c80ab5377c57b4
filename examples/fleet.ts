/**
 * One limit for a fleet (README: "Sharing a capacity across processes and
 * machines"). This program starts a private redis-server, then `--processes`
 * OS processes (this same file, in child mode), each with a `Runtime` of its
 * own on the same key. Every runtime may run up to `--max` processes, but the
 * fleet as a whole runs at most `--limit`, a bound kept in Redis. Each job
 * prints its lease's fencing token and how many jobs run across the fleet right
 * now; at the end the parent merges every job's start and end (wall-clock µs,
 * comparable across processes on one host) and shows that the fleet never
 * exceeded the limit. It stops everything it started: the children, then the
 * server and its temp dir.
 *
 * ```sh
 * deno task demo:fleet
 * deno run --allow-env --allow-read --allow-write --allow-run --allow-net=127.0.0.1 \
 *   examples/fleet.ts [--processes 3] [--limit 4] [--max 3] [--jobs 8]
 * ```
 *
 * Needs `redis-server` on the PATH (Debian: `apt-get install redis-server`).
 *
 * @module
 */
import { Redis } from "ioredis";
import { type LangL, Runtime } from "../mod.ts";
import { redisCapacity } from "../redis.ts";
import { logToConsole, parseNumberFlags, runMain, UsageError } from "./_cli.ts";
import { type RedisServer, startRedisServer } from "./_redis_server.ts";
import { type JobRecord, peakOverlap, sharedTokens } from "./_fleet_checks.ts";
import { lines, readLine } from "./_lines.ts";

/** What the parent tells each child, as one JSON argument. */
interface ChildOptions {
  name: string;
  port: number;
  limit: number;
  max: number;
  jobs: number;
}

const KEY = "fleet-demo";
/** A plain Redis counter beside procpool's keys: jobs running across the fleet right now. */
const RUNNING = "fleet-demo:running";
const LEASE_MS = 3_000;
const FILE = new URL(import.meta.url).pathname;
/** Children run from the repository root, where deno.json maps "ioredis". */
const ROOT = new URL("..", import.meta.url).pathname;

const wallUs = (): number => Math.round((performance.timeOrigin + performance.now()) * 1000);

// ---- a child: one OS process, one Runtime ------------------------------------

async function child(options: ChildOptions): Promise<void> {
  // The library never configures LogTape; a program does. Store outages are warnings.
  const undoLogging = await logToConsole("procpool", "warning");
  const redis = new Redis({ host: "127.0.0.1", port: options.port, lazyConnect: true });
  await redis.connect();
  try {
    await using runtime = new Runtime({
      maxProcesses: options.max,
      shared: redisCapacity({ redis, key: KEY, limit: options.limit, leaseMs: LEASE_MS }),
    });
    console.log("ready");
    await readLine(Deno.stdin.readable); // "go": the parent starts every runtime at once

    const job = async (n: number, lang: LangL): Promise<JobRecord> => {
      const startUs = wallUs();
      const fence = lang.fence;
      if (fence === undefined) throw new Error("no fencing token: the runtime is not shared");
      const running = await lang.evalIO(() => redis.incr(RUNNING));
      const held = runtime.stats().shared?.held;
      console.log(
        `${options.name}: job ${n} starts  fence ${fence}  ` +
          `running in the fleet ${running}/${options.limit}  leases held here ${held}`,
      );
      try {
        await lang.delay(lang.getRandomInt(30, 90));
      } finally {
        await redis.decr(RUNNING);
      }
      return { runtime: options.name, job: n, fence, startUs, endUs: wallUs() };
    };
    const numbers = Array.from({ length: options.jobs }, (_, i) => i + 1);
    const records = await runtime.runApp((app) => app.forkAll(numbers, job));
    console.log(`report ${JSON.stringify(records)}`);
  } finally {
    // The runtime is disposed by now and gave its leases back through this
    // client, which procpool never closes: closing it is ours to do.
    await redis.quit();
    await undoLogging();
  }
}

// ---- the parent: a redis-server and the children -----------------------------

class Child {
  readonly process: Deno.ChildProcess;
  readonly #lines: AsyncIterator<string>;

  constructor(readonly name: string, options: ChildOptions) {
    this.process = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-net=127.0.0.1",
        "--allow-env",
        "--allow-read",
        FILE,
        "--child",
        JSON.stringify(options),
      ],
      cwd: ROOT,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#lines = lines(this.process.stdout);
  }

  async ready(): Promise<void> {
    const line = await this.#next("ready");
    if (line !== "ready") throw new Error(`child ${this.name} said ${JSON.stringify(line)}`);
  }

  async go(): Promise<void> {
    const writer = this.process.stdin.getWriter();
    await writer.write(new TextEncoder().encode("go\n"));
    await writer.close();
  }

  /** Relays the child's lines until its report, which it returns. */
  async report(): Promise<JobRecord[]> {
    for (;;) {
      const line = await this.#next("its report");
      if (line.startsWith("report ")) return JSON.parse(line.slice("report ".length));
      console.log(line);
    }
  }

  /** Relays what the child prints after its report; resolves once it has exited. */
  async finish(): Promise<Deno.CommandStatus> {
    for (let line; !(line = await this.#lines.next()).done;) console.log(line.value);
    return await this.process.status;
  }

  /** Stops the child if it still runs; resolves once it has exited. */
  async stop(): Promise<void> {
    try {
      this.process.kill("SIGTERM");
    } catch {
      // Already exited.
    }
    while (!(await this.#lines.next()).done); // drain, so the pipe closes
    await this.process.status;
  }

  async #next(what: string): Promise<string> {
    const { value, done } = await this.#lines.next();
    if (done) {
      const { code } = await this.process.status;
      throw new Error(`child ${this.name} exited (code ${code}) before ${what}`);
    }
    return value;
  }
}

async function parent(args: readonly string[]): Promise<void> {
  const { processes, limit, max, jobs } = parseNumberFlags(args, {
    processes: { default: 3, min: 1, max: 8, integer: true },
    limit: { default: 4, min: 1, integer: true },
    max: { default: 3, min: 1, integer: true },
    jobs: { default: 8, min: 1, integer: true },
  });
  const server = await startServer();
  const children: Child[] = [];
  let interrupted = false;
  const onInterrupt = () => {
    interrupted = true;
    for (const child of children) void child.stop();
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  let records: JobRecord[];
  const started = performance.now();
  try {
    console.log(`redis-server on 127.0.0.1:${server.port} (private, nothing persisted)`);
    console.log(
      `${processes} OS processes, each a Runtime with maxProcesses ${max} ` +
        `(${processes * max} local slots), share key "${KEY}" with limit ${limit}`,
    );
    for (let i = 0; i < processes; i++) {
      const name = String.fromCharCode(65 + i);
      children.push(new Child(name, { name, port: server.port, limit, max, jobs }));
    }
    await Promise.all(children.map((child) => child.ready()));
    await Promise.all(children.map((child) => child.go()));
    records = (await Promise.all(children.map((child) => child.report()))).flat();
    // Each child disposes of its runtime (its leases go back) and closes its client.
    const statuses = await Promise.all(children.map((child) => child.finish()));
    const failed = statuses.filter((status) => !status.success).length;
    if (failed > 0) throw new Error(`${failed} child processes did not exit cleanly`);
    await showLeftovers(server.port);
  } catch (error) {
    if (!interrupted) throw error;
    console.log("interrupted (Ctrl-C)");
    Deno.exitCode = 130;
    return;
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
    await Promise.all(children.map((child) => child.stop()));
    await server.stop();
    console.log(`stopped ${children.length} child processes and the redis-server`);
  }
  summarise(records, {
    limit,
    slots: processes * max,
    seconds: (performance.now() - started) / 1e3,
  });
}

/**
 * What the fleet left in Redis once every runtime was disposed: its leases
 * went back and its wait records went, so the script deleted the key's
 * records; only the last fencing token stays, so that tokens keep increasing.
 */
async function showLeftovers(port: number): Promise<void> {
  const redis = new Redis({ host: "127.0.0.1", port, lazyConnect: true });
  try {
    await redis.connect();
    const prefix = `procpool:{${KEY}}:`;
    const records = ["leases", "waiters", "state", "holders"].map((name) => prefix + name);
    const left = await redis.exists(...records);
    const fence = await redis.get(prefix + "fence");
    console.log(
      `left in Redis after the runtimes were disposed: ${left} lease or wait records, ` +
        `and the last fencing token ${fence}`,
    );
    if (left > 0) throw new Error(`the runtimes left ${left} records in Redis`);
  } finally {
    redis.disconnect();
  }
}

async function startServer(): Promise<RedisServer> {
  try {
    return await startRedisServer();
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    throw new UsageError(
      "redis-server was not found on the PATH; install it (Debian: apt-get install redis-server)",
    );
  }
}

function summarise(
  records: readonly JobRecord[],
  { limit, slots, seconds }: { limit: number; slots: number; seconds: number },
): void {
  const peak = peakOverlap(records);
  const perRuntime = new Map<string, number>();
  for (const r of records) perRuntime.set(r.runtime, (perRuntime.get(r.runtime) ?? 0) + 1);
  const shares = [...perRuntime].map(([name, n]) => `${name} ${n}`).join(", ");
  console.log(`${records.length} jobs in ${seconds.toFixed(1)} s (${shares})`);
  console.log(
    `at most ${peak} jobs ran at once across the fleet: limit ${limit}, ${slots} local slots`,
  );
  const tokens = new Set(records.map((r) => r.fence)).size;
  console.log(
    `${tokens} distinct fencing tokens over ${records.length} jobs ` +
      "(a lease passes from job to job within a runtime and keeps its token)",
  );
  const shared = sharedTokens(records);
  if (shared > 0) console.log(`ERROR: ${shared} pairs of jobs ran at once under one token`);
  if (peak > limit) console.log(`ERROR: the fleet exceeded its limit of ${limit}`);
  else console.log("the fleet never exceeded the limit, and no token was used twice at once");
  if (peak > limit || shared > 0) Deno.exitCode = 1;
}

if (import.meta.main) {
  await runMain((args) =>
    args[0] === "--child" ? child(JSON.parse(args[1]) as ChildOptions) : parent(args)
  );
}
