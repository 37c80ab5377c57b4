// A capacity shared across OS processes through Redis: procpool against
// redis-semaphore and Bottleneck's clustering mode, every figure from one run
// on one private redis-server. Each row of each library runs in fresh OS
// processes (_fleet_worker.ts) on its own key. Markdown goes to stdout (paste
// it into BENCHMARKS.md), progress to stderr.
//
//   deno task bench:fleet [--libs=procpool,redis-semaphore,bottleneck] [--processes=4]
//     [--seconds=5] [--idle-seconds=10] [--only=hold,handoff,paced,short,idle]
//     [--short-hold=thread|poll|timeout] [--warm-up-seconds=N]
//   --libs may also name lease-manager: procpool's lease manager without a Runtime (debugging).
//   Without --libs, the hand-off row also runs ref-notify and ref-grant (bench/_fleet_refs.ts).
//   The hand-off row ends with a pub/sub floor: the same pattern by PUBLISH alone (bench/_fleet_ping.ts).
//   --short-hold: how the short row's holds of 0–1 ms are made (bench/_short_hold.ts); thread by default.
//   --warm-up-seconds: how long the load rows run before their window; by default 2 s (WARM_UP_MS
//   in bench/_fleet_row.ts), and 10 s in the hand-off row (HANDOFF_WARM_UP_MS below).
//   PROCPOOL_FLEET_DUMP=<dir>: each row's holds and window also go there as JSON, to read single
//   hand-offs afterwards (bench/_fleet_row.ts).
import { Redis } from "ioredis";
import { startRedisServer } from "../tests/_redis_server.ts";
import {
  handoffTable,
  holdTable,
  idleFigures,
  idleTable,
  loadFigures,
  shortTable,
} from "./_fleet_figures.ts";
import { LEASE_MS, LIBRARIES, type Library } from "./_fleet_limiters.ts";
import { cpuSeconds } from "./_fleet_redis.ts";
import { pingFloor } from "./_fleet_ping.ts";
import { type RowSpec, runRow, WARM_UP_MS } from "./_fleet_row.ts";
import { machine, stdoutOf } from "./_machine.ts";
import { PEERS, targets } from "./_fleet_targets.ts";
import { intArg } from "./_shared.ts";
import { SHORT_HOLDS, type ShortHold } from "./_short_hold.ts";

function option(name: string): string | undefined {
  const prefix = `--${name}=`;
  return Deno.args.find((arg) => arg.startsWith(prefix))?.slice(prefix.length);
}

const unknown = Deno.args.filter((arg) =>
  !/^--(libs|processes|seconds|idle-seconds|only|short-hold|warm-up-seconds)=/.test(arg)
);
if (unknown.length > 0) {
  console.error(`unknown arguments: ${unknown.join(" ")} (see the header of bench/fleet.ts)`);
  Deno.exit(2);
}
const libraries = (option("libs")?.split(",") ?? ["procpool", ...PEERS]) as Library[];
for (const library of libraries) {
  if (!LIBRARIES.includes(library)) {
    console.error(`unknown library ${library}; one of ${LIBRARIES.join(", ")}`);
    Deno.exit(2);
  }
}
const ROWS = ["hold", "handoff", "paced", "short", "idle"];
const only = option("only")?.split(",") ?? ROWS;
for (const row of only) {
  if (!ROWS.includes(row)) {
    console.error(`unknown row ${row}; one of ${ROWS.join(", ")}`);
    Deno.exit(2);
  }
}
const shortHold = (option("short-hold") ?? "thread") as ShortHold;
if (!SHORT_HOLDS.includes(shortHold)) {
  console.error(`unknown --short-hold ${shortHold}; one of ${SHORT_HOLDS.join(", ")}`);
  Deno.exit(2);
}
const processes = intArg(option("processes"), 4);
const SHORT_HOW: Record<ShortHold, string> = {
  thread: "a timer thread",
  poll: "polling setImmediate",
  timeout: "setTimeout",
};
const seconds = intArg(option("seconds"), 5);
const idleSeconds = intArg(option("idle-seconds"), 10);
const warmUpOption = option("warm-up-seconds");
const warmUpMs = intArg(warmUpOption, WARM_UP_MS / 1000) * 1000;
/**
 * The hand-off row's warm-up. Its processes run one job at a time (about 100
 * a second each), and V8 optimises a function (Maglev) only after some 400
 * calls: procpool's start path was queued for Maglev only 5–6 s into the
 * row, and ran at up to twice its later release→start p50, while ref-grant's small
 * scripts ran at their best from the start (BENCHMARKS.md, "The hand-off row
 * and V8's tiers"). The row times each library's optimised code, as the load
 * rows' warm-up intends, and as in a long-lived fleet.
 */
const HANDOFF_WARM_UP_MS = 10_000;
const handoffWarmUpMs = intArg(warmUpOption, HANDOFF_WARM_UP_MS / 1000) * 1000;

const HOLD: RowSpec = {
  name: "hold",
  limit: 8,
  local: 8,
  load: { lanes: 8, holdMinMs: 2, holdMaxMs: 5, short: shortHold },
  ms: seconds * 1000,
  warmUpMs,
};
// One job at a time per process, and fewer slots than processes: a process
// that releases has nothing of its own waiting, so the slot must go to another.
const HANDOFF: RowSpec = {
  name: "handoff",
  limit: Math.max(1, Math.floor(processes / 2)),
  local: 1,
  load: { lanes: 1, holdMinMs: 2, holdMaxMs: 5, short: shortHold },
  ms: seconds * 1000,
  warmUpMs: handoffWarmUpMs,
};
/**
 * The hand-off row with every process pausing PACED_PAUSE_MS after each job,
 * longer than redis-semaphore's poll interval (10 ms): a releaser does not ask
 * again before the others' polls, so every hand-off goes to another process
 * and none is left out of the sample (in the hand-off row, a poller's
 * cross-process pairs are only the polls that beat its releaser's own
 * re-acquire). More processes than the hand-off row's, and a limit of 1, so
 * that someone waits at most releases.
 */
const PACED_PAUSE_MS = 12;
const PACED_PROCESSES = 2 * processes;
const PACED: RowSpec = {
  name: "paced",
  limit: 1,
  local: 1,
  load: { lanes: 1, holdMinMs: 2, holdMaxMs: 5, short: shortHold, pauseMs: PACED_PAUSE_MS },
  ms: seconds * 1000,
  warmUpMs: handoffWarmUpMs,
};
const SHORT: RowSpec = {
  name: "short",
  limit: 16,
  local: 16,
  load: { lanes: 16, holdMinMs: 0, holdMaxMs: 1, short: shortHold },
  ms: seconds * 1000,
  warmUpMs,
};
const HOLDERS = 2, WAITERS = 25;
const IDLE: RowSpec = {
  name: "idle",
  limit: HOLDERS * processes,
  // Room for every waiter to hold a local slot, so that all of them wait on the shared capacity.
  local: HOLDERS + WAITERS,
  idle: { holders: HOLDERS, waiters: WAITERS },
  ms: idleSeconds * 1000,
};

const started = performance.now();
await using server = await startRedisServer();
const redis = new Redis({ host: "127.0.0.1", port: server.port, lazyConnect: true });
await redis.connect();

const version = /redis_version:(\S+)/.exec(await redis.info("server"))?.[1];
const load = async () => (await stdoutOf("cat", "/proc/loadavg"))?.split(" ").slice(0, 3).join(" ");
console.log(`### Machine\n\n${await machine()}`);
console.log(
  `- redis-server ${version}, private, on loopback; load average at start ${await load()}\n`,
);

const failures: string[] = [];
async function each<F>(
  spec: RowSpec,
  figures: (run: Awaited<ReturnType<typeof runRow>>) => F,
  extra: Library[] = [],
  count: number = processes,
) {
  const rows: [Library, F][] = [];
  if (!only.includes(spec.name)) return rows;
  for (const library of [...libraries, ...extra]) {
    console.error(`… ${spec.name}: ${library}`);
    try {
      rows.push([library, figures(await runRow(redis, server.port, library, spec, count))]);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      failures.push(`- ${library}, row "${spec.name}": could not run: ${message.split("\n")[0]}`);
      console.error(`… ${library} failed in row ${spec.name}:`, error);
    }
  }
  return rows;
}

/** Prints a row's section, if it ran. */
function print(rows: unknown[], markdown: string): void {
  if (rows.length > 0) console.log(markdown);
}

const hold = await each(HOLD, (run) => loadFigures(run, HOLD.limit, processes));
print(
  hold,
  `### ${processes} processes, limit ${HOLD.limit}, holds of 2–5 ms (${seconds} s each after ${
    warmUpMs / 1000
  } s of warm-up)\n\n${holdTable(hold, HOLD.limit)}\n`,
);
const handoff = await each(
  HANDOFF,
  (run) => loadFigures(run, HANDOFF.limit, processes),
  option("libs") === undefined ? ["ref-notify", "ref-grant"] : [],
);
const floor = handoff.length > 0 ? await pingFloorLine() : "";
print(
  handoff,
  `### Release→start across processes: ${processes} processes of one job at a time, limit ${HANDOFF.limit}, holds of 2–5 ms (${seconds} s each after ${
    handoffWarmUpMs / 1000
  } s of warm-up)\n\n${handoffTable(handoff, HANDOFF.limit)}\n${floor}`,
);

/** The hand-off pattern by PUBLISH alone, in this run: what pub/sub and a wake-up cost here. */
async function pingFloorLine(): Promise<string> {
  console.error("… handoff: pub/sub floor");
  try {
    const tokens = HANDOFF.limit;
    const floor = await pingFloor(redis, server.port, { size: processes, tokens, ms: HANDOFF.ms });
    return `\nFloor, same run: ${processes} processes passing ${tokens} tokens by \`PUBLISH\` alone ` +
      `(no script, no acquire; holds of 2–5 ms, bench/_fleet_ping.ts): publish→receipt p50 ` +
      `${floor.p50.toFixed(2)} ms, p99 ${floor.p99.toFixed(2)} ms (${
        floor.count.toLocaleString("en-US")
      } hand-offs).\n`;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    failures.push(
      `- the pub/sub floor of the hand-off row: could not run: ${message.split("\n")[0]}`,
    );
    return "";
  }
}
const paced = await each(
  PACED,
  (run) => loadFigures(run, PACED.limit, PACED_PROCESSES),
  option("libs") === undefined ? ["ref-grant"] : [],
  PACED_PROCESSES,
);
print(
  paced,
  `### Release→start with the releaser paused: ${PACED_PROCESSES} processes of one job at a time, limit ${PACED.limit}, holds of 2–5 ms, then ${PACED_PAUSE_MS} ms before asking again (${seconds} s each after ${
    handoffWarmUpMs / 1000
  } s of warm-up; informative, no target)\n\n${handoffTable(paced, PACED.limit)}\n`,
);
const short = await each(SHORT, (run) => loadFigures(run, SHORT.limit, processes));
print(
  short,
  `### ${processes} processes, limit ${SHORT.limit}, holds of 0–1 ms made by ${
    SHORT_HOW[shortHold]
  } (${seconds} s each after ${warmUpMs / 1000} s of warm-up)\n\n${
    shortTable(short, SHORT.limit)
  }\n`,
);

const before = await cpuSeconds(redis);
if (only.includes("idle")) await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
const alone = (await cpuSeconds(redis) - before) * 1000 / idleSeconds;
const idle = await each(IDLE, (run) => idleFigures(run, WAITERS * processes));
print(
  idle,
  `### ${WAITERS * processes} forks waiting idle for ${idleSeconds} s, limit ${IDLE.limit}\n\n${
    idleTable(idle, IDLE.limit)
  }\n\nRedis alone (only this driver connected) used ${alone.toFixed(2)} ms CPU/s.\n`,
);

const targetLines = targets({
  hold,
  short,
  shortLimit: SHORT.limit,
  handoff,
  idle,
  aloneMsPerS: alone,
});
console.log(
  `### Targets (procpool against the better peer of this run)\n\n${targetLines.join("\n")}\n`,
);
if (failures.length > 0) console.log(`### Could not run\n\n${failures.join("\n")}\n`);
console.log(`Load average at the end: ${await load()}; leases and locks of ${LEASE_MS} ms.`);
redis.disconnect();
console.error(`… done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
