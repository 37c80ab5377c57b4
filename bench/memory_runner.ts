// Memory held by N queued tasks, in a fresh process (start it with
// --v8-flags=--expose-gc so the numbers are of live objects, not garbage):
//   deno run --allow-env --allow-read --v8-flags=--expose-gc bench/memory_runner.ts <impl> <N>
// `capacity` tasks block on a gate, N more are queued behind them, then the
// heap is measured, the gate opens and every result is checked. "floor"
// builds the same N closures and N pending promises without any pool.
import pLimit from "p-limit";
import PQueue from "p-queue";
import { type ProcessHandle, Runtime } from "../mod.ts";
import { collectGarbage, emit, intArg, task } from "./_shared.ts";

const CAPACITY = 8;
const SAMPLE_EVERY = 10_000;

interface Held {
  /** Closures kept by the caller too, so every variant holds the same user objects. */
  readonly fns: (() => Promise<number>)[];
  readonly promises: Promise<unknown>[];
}

let peakRss = 0;
function sampleRss(): void {
  const rss = Deno.memoryUsage().rss;
  if (rss > peakRss) peakRss = rss;
}

interface Snapshot {
  rss: number;
  heapUsed: number;
  external: number;
}

function snapshot(): Snapshot {
  collectGarbage();
  const { rss, heapUsed, external } = Deno.memoryUsage();
  return { rss, heapUsed, external };
}

/** Queues `n` tasks via `submit`, then measures while they are all queued. */
function fill(n: number, submit: (fn: () => Promise<number>) => Promise<unknown>): {
  held: Held;
  queued: Snapshot;
} {
  const held: Held = { fns: new Array(n), promises: new Array(n) };
  for (let i = 0; i < n; i++) {
    const fn = () => task(i);
    held.fns[i] = fn;
    held.promises[i] = submit(fn);
    if (i % SAMPLE_EVERY === 0) sampleRss();
  }
  sampleRss();
  return { held, queued: snapshot() };
}

type Variant = (n: number) => Promise<Snapshot>;

const variants: Record<string, Variant> = {
  floor(n) {
    const never = () => {};
    const { held, queued } = fill(n, () => new Promise(never));
    if (held.promises.length !== n) throw new Error("floor: lost promises");
    return Promise.resolve(queued);
  },

  async "procpool forkProcess"(n) {
    await using runtime = new Runtime({ maxProcesses: CAPACITY });
    return await runtime.runApp(async (app) => {
      const gate = Promise.withResolvers<void>();
      for (let b = 0; b < CAPACITY; b++) await app.forkProcess(() => gate.promise);
      const { held, queued } = fill(n, (fn) => app.forkProcess(fn));
      if (runtime.stats().waiting !== n) throw new Error("procpool: not all forks queued");
      gate.resolve();
      const handles = await Promise.all(held.promises as Promise<ProcessHandle<number>>[]);
      for (let i = 0; i < n; i++) {
        if (await app.awaitResult(handles[i]) !== i) throw new Error(`procpool: bad result ${i}`);
      }
      return queued;
    });
  },

  async "p-limit"(n) {
    const limit = pLimit(CAPACITY);
    const gate = Promise.withResolvers<void>();
    for (let b = 0; b < CAPACITY; b++) limit(() => gate.promise);
    const { held, queued } = fill(n, (fn) => limit(fn));
    if (limit.pendingCount !== n) throw new Error("p-limit: not all tasks queued");
    gate.resolve();
    check("p-limit", await Promise.all(held.promises), n);
    return queued;
  },

  async "p-queue"(n) {
    const queue = new PQueue({ concurrency: CAPACITY });
    const gate = Promise.withResolvers<void>();
    for (let b = 0; b < CAPACITY; b++) queue.add(() => gate.promise);
    const { held, queued } = fill(n, (fn) => queue.add(fn));
    if (queue.size !== n) throw new Error("p-queue: not all tasks queued");
    gate.resolve();
    check("p-queue", await Promise.all(held.promises), n);
    return queued;
  },
};

function check(label: string, results: unknown[], n: number): void {
  for (let i = 0; i < n; i++) {
    if (results[i] !== i) throw new Error(`${label}: bad result ${i}`);
  }
}

const [name, nArg] = Deno.args;
const variant = variants[name];
if (variant === undefined) {
  console.error(`unknown variant ${JSON.stringify(name)}; one of: ${Object.keys(variants)}`);
  Deno.exit(2);
}
const n = intArg(nArg, 1_000_000);
if ((globalThis as { gc?: unknown }).gc === undefined) {
  console.error("warning: run with --v8-flags=--expose-gc for stable numbers");
}
const before = snapshot();
peakRss = before.rss;
// Also sample while the queue drains: a pool may peak after the gate opens.
const sampler = setInterval(sampleRss, 5);
const queued = await variant(n);
clearInterval(sampler);
sampleRss();
emit({ variant: name, n, before, queued, peakRss });
