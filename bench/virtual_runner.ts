// Virtual-clock throughput: P processes each doing D delays on a test
// runtime (auto-advancing VirtualClock), all running at once:
//   deno run --allow-env --allow-read --v8-flags=--expose-gc bench/virtual_runner.ts [P] [D] [runs]
// Delays vary per process (1..10 ms) so the clock visits many instants and the
// sleeper heap does real work. Prints the wall and CPU ms of each run, and of
// a floor run just before it: the same P async loops awaiting D sleeps on a
// bare bucketed heap of resolvers, fired one instant per macrotask turn, with
// no runtime, no trace and no cancellation.
import process from "node:process";
import { setImmediate } from "node:timers";
import TinyQueue from "tinyqueue";
import { createTestRuntime } from "../testing.ts";
import { checkResults, collectGarbage, emit, intArg, range } from "./_shared.ts";

const [processesArg, delaysArg, runsArg] = Deno.args;
const processes = intArg(processesArg, 10_000);
const delays = intArg(delaysArg, 100);
const runs = intArg(runsArg, 3);

const stepOf = (i: number) => 1 + (i % 10);
const expectedEnd = (p: number, d: number) => d * Math.max(...range(Math.min(p, 10)).map(stepOf));

interface Timed {
  ms: number;
  cpuMs: number;
}

async function timed(run: () => Promise<void>): Promise<Timed> {
  collectGarbage();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run();
  const ms = performance.now() - start;
  const { user, system } = process.cpuUsage(cpu);
  return { ms, cpuMs: (user + system) / 1000 };
}

async function procpool(p: number, d: number): Promise<Timed> {
  await using runtime = createTestRuntime({ maxProcesses: p, seed: 1 });
  let results: number[] = [];
  const time = await timed(async () => {
    results = await runtime.runApp((app) =>
      app.forkAll(range(p), async (i, lang) => {
        const step = stepOf(i);
        for (let k = 0; k < d; k++) await lang.delay(step);
        return i;
      })
    );
  });
  checkResults("virtual", results, p);
  if (runtime.clock.now() !== expectedEnd(p, d)) {
    throw new Error(`virtual clock reads ${runtime.clock.now()}, expected ${expectedEnd(p, d)}`);
  }
  if (runtime.trace.length !== p * d) {
    throw new Error(`trace has ${runtime.trace.length} events, expected ${p * d}`);
  }
  return time;
}

/** What bounds the figure: promises, async loops and a heap of instants, nothing else. */
async function floor(p: number, d: number): Promise<Timed> {
  const buckets = new Map<number, (() => void)[]>();
  const instants = new TinyQueue<number>();
  let now = 0;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const at = now + ms;
      let bucket = buckets.get(at);
      if (bucket === undefined) {
        buckets.set(at, bucket = []);
        instants.push(at);
      }
      bucket.push(resolve);
    });
  let results: number[] = [];
  const time = await timed(async () => {
    const all = Promise.all(
      range(p).map(async (i) => {
        const step = stepOf(i);
        for (let k = 0; k < d; k++) await sleep(step);
        return i;
      }),
    );
    await new Promise<void>((done) => {
      const tick = () => {
        const at = instants.pop();
        if (at === undefined) return done();
        now = at;
        const bucket = buckets.get(at)!;
        buckets.delete(at);
        for (const resolve of bucket) resolve();
        // Emptied, as the clock does: a dead bucket in the old generation
        // would keep its young resolvers alive through scavenges.
        bucket.length = 0;
        setImmediate(tick);
      };
      setImmediate(tick);
    });
    results = await all;
  });
  checkResults("floor", results, p);
  if (now !== expectedEnd(p, d)) throw new Error(`floor ended at ${now}`);
  return time;
}

// A full-size warm-up, as the other runners do: the JIT and the heap settle first.
await floor(processes, delays);
await procpool(processes, delays);
const ms: number[] = [], cpuMs: number[] = [], floorMs: number[] = [], floorCpuMs: number[] = [];
for (let r = 0; r < runs; r++) {
  const f = await floor(processes, delays);
  floorMs.push(f.ms);
  floorCpuMs.push(f.cpuMs);
  const v = await procpool(processes, delays);
  ms.push(v.ms);
  cpuMs.push(v.cpuMs);
}
emit({ processes, delays, events: processes * delays, ms, cpuMs, floorMs, floorCpuMs });
