// procpool against its peers, every figure from one run, each measurement in
// a fresh `deno run`. Markdown goes to stdout (paste it into BENCHMARKS.md),
// progress to stderr. A run with both throughput and memory also draws their
// tables as BENCHMARKS.svg, next to BENCHMARKS.md.
//
//   deno task bench:peers [--only=throughput,memory,latency,virtual,abort] [--n=200000]
//     [--memory-n=1000000] [--waiters=1000] [--processes=10000] [--delays=100]
//     [--abort-n=100000] [--cpu-tasks=200] [--tiny=2000]
//   --only=cpu runs the worker-process section alone.
import {
  FORK_ALL,
  FORK_AWAIT,
  GUARDED_FLOOR,
  LANE_FLOOR,
  memory,
  throughput,
  virtual,
} from "./_sections.ts";
import { abortAll } from "./_abort_section.ts";
import { latency } from "./_latency_section.ts";
import { cpu } from "./_cpu_section.ts";
import { fmt, intArg, ratio } from "./_shared.ts";
import { parseTables, renderChart } from "./_chart.ts";
import { machine, revision } from "./_machine.ts";

const SECTIONS = ["throughput", "memory", "latency", "virtual", "abort", "cpu"] as const;
type Section = typeof SECTIONS[number];

function option(name: string): string | undefined {
  const prefix = `--${name}=`;
  return Deno.args.find((arg) => arg.startsWith(prefix))?.slice(prefix.length);
}

const unknown = Deno.args.filter((arg) =>
  !/^--(only|n|memory-n|waiters|processes|delays|abort-n|cpu-tasks|tiny)=/.test(arg)
);
if (unknown.length > 0) {
  console.error(`unknown arguments: ${unknown.join(" ")} (see the header of bench/peers.ts)`);
  Deno.exit(2);
}
const only = (option("only")?.split(",") ?? [...SECTIONS]) as Section[];
for (const section of only) {
  if (!SECTIONS.includes(section)) {
    console.error(`unknown section ${section}; one of ${SECTIONS.join(", ")}`);
    Deno.exit(2);
  }
}
const n = intArg(option("n"), 200_000);
const memoryN = intArg(option("memory-n"), 1_000_000);
const waiters = intArg(option("waiters"), 1_000);
const processes = intArg(option("processes"), 10_000);
const delays = intArg(option("delays"), 100);
const abortN = intArg(option("abort-n"), 100_000);
const cpuTasks = intArg(option("cpu-tasks"), 200);
const tinyTasks = intArg(option("tiny"), 2_000);
const CONCURRENCY = 8;

const started = performance.now();
console.log(`## Machine\n\n${await machine()}\n`);

const targets: string[] = [];
function target(label: string, pass: boolean | undefined, detail: string): void {
  const verdict = pass === undefined ? "SKIP" : pass ? "PASS" : "FAIL";
  targets.push(`- **${verdict}** ${label}: ${detail}`);
}

const charted: string[] = [];
if (only.includes("throughput")) {
  const t = await throughput(n, CONCURRENCY);
  charted.push(t.markdown);
  console.log(`## Throughput: ${fmt(n)} tiny tasks, concurrency ${CONCURRENCY}\n\n${t.markdown}\n`);
  const forkAwait = t.rate[FORK_AWAIT] / t.rate["p-limit"];
  const floor = t.rate["ref: minimal fork+await"];
  const guarded = t.rate[GUARDED_FLOOR];
  target(
    "fork+await (fifo) ≥ 1.0× p-limit throughput",
    forkAwait >= 1.0,
    `${ratio(forkAwait)}; the shape's floor (ref: minimal fork+await) is ${
      ratio(floor / t.rate["p-limit"])
    } p-limit, and with the nested-fork guard and the forker's context (${GUARDED_FLOOR}) ${
      ratio(guarded / t.rate["p-limit"])
    }; procpool reaches ${ratio(t.rate[FORK_AWAIT] / guarded)} of the latter`,
  );
  const loop = t.rate["ref: worker loop"];
  const forkAll = t.rate[FORK_ALL] / loop;
  const processFloor = t.rate["ref: worker loop + process objects"];
  const laneFloor = t.rate[LANE_FLOOR];
  target(
    "forkAll ≥ 0.5× the 8-worker loop",
    forkAll >= 0.5,
    `${
      ratio(forkAll)
    }; the loop with a process's objects per task (ref: worker loop + process objects) is ${
      ratio(processFloor / loop)
    } the loop, procpool reaches ${
      ratio(t.rate[FORK_ALL] / processFloor)
    } of it; with the nested-fork guard's lane as well (${LANE_FLOOR}) the floor is ${
      ratio(laneFloor / loop)
    } the loop, procpool reaches ${ratio(t.rate[FORK_ALL] / laneFloor)} of that`,
  );
  const allocated = t.bytes[FORK_AWAIT], pLimitAllocated = t.bytes["p-limit"];
  target(
    "allocation per fork+await task ≤ p-limit's",
    allocated <= pLimitAllocated,
    `${fmt(allocated)} B against ${fmt(pLimitAllocated)} B (${GUARDED_FLOOR}: ${
      fmt(t.bytes[GUARDED_FLOOR])
    } B)`,
  );
} else {
  target("fork+await (fifo) ≥ 1.0× p-limit throughput", undefined, "not run");
  target("forkAll ≥ 0.5× the 8-worker loop", undefined, "not run");
  target("allocation per fork+await task ≤ p-limit's", undefined, "not run");
}

if (only.includes("memory")) {
  const m = await memory(memoryN);
  charted.push(m.markdown);
  console.log(`## Memory: ${fmt(memoryN)} queued tasks\n\n${m.markdown}\n`);
  const bytes = m.aboveFloor["procpool forkProcess"];
  target(
    "memory per queued fork ≤ 0.35 KB above the floor",
    bytes <= 0.35 * 1024,
    `${fmt(bytes)} B (${(bytes / 1024).toFixed(3)} KB; p-limit ${fmt(m.aboveFloor["p-limit"])} B)`,
  );
} else {
  target("memory per queued fork ≤ 0.35 KB above the floor", undefined, "not run");
}

if (only.includes("latency")) {
  const l = await latency(waiters, CONCURRENCY);
  console.log(`## Hand-off latency and idle CPU (system clock)\n\n${l.markdown}\n`);
  const fifo = l.byPolicy["fifo"], pLimit = l.byPolicy["p-limit"];
  const guarded = l.byPolicy["ref-guarded"];
  const ratios = (h: { medianUs: number; p99Us: number }) =>
    `median ${ratio(h.medianUs / pLimit.medianUs)}, p99 ${ratio(h.p99Us / pLimit.p99Us)}`;
  target(
    "fifo release→start median and p99 ≤ 2× p-limit's (warm round)",
    fifo.medianUs <= 2 * pLimit.medianUs && fifo.p99Us <= 2 * pLimit.p99Us,
    `median ${fmt(fifo.medianUs, 1)} µs (${ratio(fifo.medianUs / pLimit.medianUs)} p-limit's), ` +
      `p99 ${fmt(fifo.p99Us, 1)} µs (${ratio(fifo.p99Us / pLimit.p99Us)}); ${GUARDED_FLOOR}: ` +
      `${ratios(guarded)} p-limit's; first round: fifo median ` +
      `${ratio(fifo.coldMedianUs / pLimit.coldMedianUs)}, p99 ` +
      `${ratio(fifo.coldP99Us / pLimit.coldP99Us)} p-limit's (floor median ` +
      `${ratio(guarded.coldMedianUs / pLimit.coldMedianUs)}, p99 ` +
      `${ratio(guarded.coldP99Us / pLimit.coldP99Us)})`,
  );
} else {
  target("fifo release→start median and p99 ≤ 2× p-limit's (warm round)", undefined, "not run");
}

if (only.includes("virtual")) {
  const v = await virtual(processes, delays);
  console.log(`## Virtual clock\n\n${v.markdown}\n`);
  target(
    "≥ 1,000,000 virtual delay events/s",
    v.eventsPerSecond >= 1_000_000,
    `${fmt(v.eventsPerSecond)} events/s; the floor (bare heap of resolvers, same run) ` +
      `${fmt(v.floorEventsPerSecond)} events/s, procpool reaches ` +
      `${(v.eventsPerSecond / v.floorEventsPerSecond).toFixed(2)}× of it`,
  );
} else {
  target("≥ 1,000,000 virtual delay events/s", undefined, "not run");
}

if (only.includes("abort")) {
  const table = await abortAll(abortN);
  console.log(`## Aborting queued tasks that share one signal\n\n${table}\n`);
}

if (only.includes("cpu")) {
  const c = await cpu(cpuTasks, tinyTasks);
  console.log(`## CPU-bound: worker processes\n\n${c.markdown}\n`);
  target(
    "CPU-bound forkWorker ≥ 1.8× ordinary processes",
    c.speedUp >= 1.8,
    `${ratio(c.speedUp)} (on ${navigator.hardwareConcurrency} cores)`,
  );
  const peers = ["piscina", "tinypool", "workerpool"].map((p) => c.tinyUs[p])
    .filter((us) => !Number.isNaN(us));
  const best = Math.min(...peers);
  target(
    "tiny-task overhead (thread) at or below the best of piscina, tinypool, workerpool",
    c.tinyUs["procpool thread"] <= best,
    `${fmt(c.tinyUs["procpool thread"], 1)} µs per task; best peer ${fmt(best, 1)} µs`,
  );
} else {
  target("CPU-bound forkWorker ≥ 1.8× ordinary processes", undefined, "not run");
}

console.log(`## Targets\n\n${targets.join("\n")}\n`);
if (charted.length === 2) {
  const svg = renderChart(parseTables(charted.join("\n\n")), await revision());
  await Deno.writeTextFile(new URL("../BENCHMARKS.svg", import.meta.url), svg);
  console.error("… BENCHMARKS.svg drawn");
}
console.error(`… done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
