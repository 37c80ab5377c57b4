// One measurement of the "cpu" bench section, in a fresh `deno run`; prints
// one JSON line. Usage: cpu_runner.ts <what> <impl> <n> [rounds]
//   what: cpu (n tasks of `rounds` hashing rounds) | tiny (`rounds` timed
//         batches of n tiny tasks, default 1, after a warm-up batch; prints
//         their median ms, each batch's ms and the process's CPU µs per task) |
//         memory (RSS per warm worker) | replace (time to replace a stopped worker)
import process from "node:process";
import { Runtime } from "../mod.ts";
import { hash } from "./cpu/task.ts";

const [what, impl, nArg, roundsArg] = Deno.args;
const n = Number(nArg);
const rounds = Number(roundsArg ?? 0);
const TASK = new URL("./cpu/task.ts", import.meta.url);
const CORES = navigator.hardwareConcurrency;

function out(value: unknown): void {
  console.log(JSON.stringify(value));
}

/** One batch of tasks, run again and again, and how to close the pool behind it. */
interface Batches {
  run(): Promise<unknown>;
  close(): Promise<unknown>;
}

function procpoolBatches(
  isolation: "thread" | "process" | "inline",
  count: number,
  input: number,
  exportName: string,
): Batches {
  const runtime = new Runtime({ maxProcesses: CORES, workers: CORES });
  return {
    run: () =>
      runtime.runApp(async (app) => {
        const handles = [];
        for (let i = 0; i < count; i++) {
          handles.push(
            isolation === "inline"
              ? await app.forkProcess(() => exportName === "tiny" ? input + 1 : hash(input))
              : await app.forkWorker(TASK, input, { export: exportName, isolation }),
          );
        }
        await Promise.all(handles.map((h) => app.awaitResult(h)));
      }),
    close: () => runtime[Symbol.asyncDispose](),
  };
}

/**
 * The warm-up batch (the workers start there), then `times` timed batches:
 * each one's ms, and the CPU ms the whole OS process used over all of them.
 */
async function timed(batches: Batches, times: number): Promise<{ ms: number[]; cpuMs: number }> {
  await batches.run();
  const cpuBefore = processCpuMs();
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const start = performance.now();
    await batches.run();
    ms.push(performance.now() - start);
  }
  const cpuMs = processCpuMs() - cpuBefore;
  await batches.close();
  return { ms, cpuMs };
}

/** CPU time this OS process (all its threads: getrusage) has used, in ms. */
function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * tinypool's default (atomics) mode deadlocks under Deno when a task reaches a
 * worker before the worker has attached its port listener: Deno's MessagePort
 * takes the queued message off the channel for that listener at once, and the
 * worker, blocked in Atomics.wait, never gets back to the event loop to see it
 * (receiveMessageOnPort finds the channel empty). tinypool marks the workers
 * it starts in its constructor ready at once, so a batch submitted right away
 * hangs. Waiting for every worker's "ready" message (which it posts just
 * before attaching the listener) and a short pause avoids that; the
 * wait is outside every timed batch.
 */
async function tinypoolStarted(threads: { on(event: "message", f: (m: unknown) => void): void }[]) {
  await Promise.all(
    threads.map((thread) =>
      new Promise<void>((resolve) =>
        thread.on("message", (message) => {
          if ((message as { ready?: boolean } | null)?.ready === true) resolve();
        })
      )
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
}

async function peerBatches(name: string, count: number): Promise<Batches> {
  const tasks = Array.from({ length: count }, (_, i) => i);
  if (name === "piscina") {
    const { Piscina } = await import("piscina");
    const pool = new Piscina({
      filename: new URL("./cpu/piscina_task.mjs", import.meta.url).href,
      minThreads: CORES,
      maxThreads: CORES,
    });
    return { run: () => Promise.all(tasks.map((i) => pool.run(i))), close: () => pool.destroy() };
  }
  if (name === "tinypool") {
    const { Tinypool } = await import("tinypool");
    const pool = new Tinypool({
      filename: new URL("./cpu/piscina_task.mjs", import.meta.url).href,
      minThreads: CORES,
      maxThreads: CORES,
    });
    await tinypoolStarted(pool.threads);
    return { run: () => Promise.all(tasks.map((i) => pool.run(i))), close: () => pool.destroy() };
  }
  if (name !== "workerpool") throw new TypeError(`unknown implementation ${name}`);
  const workerpool = (await import("workerpool")).default;
  const pool = workerpool.pool(new URL("./cpu/workerpool_task.mjs", import.meta.url).pathname, {
    minWorkers: CORES,
    maxWorkers: CORES,
    workerType: "thread",
  });
  return {
    run: () => Promise.all(tasks.map((i) => pool.exec("tiny", [i]))),
    close: async () => {
      await pool.terminate();
    },
  };
}

async function rssOf(pid: number): Promise<number> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/status`] }).output();
  const kb = /VmRSS:\s+(\d+)/.exec(new TextDecoder().decode(out.stdout))?.[1];
  return Number(kb) * 1024;
}

if (what === "cpu") {
  const { ms: [ms] } = await timed(procpoolBatches(impl as "inline", n, rounds, "hashTask"), 1);
  out({ ms });
} else if (what === "tiny") {
  // rounds: timed batches in this run (default 1); ms is their median.
  const batches = impl.startsWith("procpool")
    ? procpoolBatches(impl.slice("procpool ".length) as "thread", n, 1, "tiny")
    : await peerBatches(impl, n);
  const { ms, cpuMs } = await timed(batches, Math.max(1, rounds));
  const sorted = [...ms].sort((a, b) => a - b);
  out({
    ms: sorted[Math.floor(sorted.length / 2)],
    batches: ms,
    cpuUs: (cpuMs * 1000) / (n * ms.length),
  });
} else if (what === "memory") {
  // RSS of this process before and after `n` warm workers, plus theirs for processes.
  const before = await rssOf(Deno.pid);
  await using runtime = new Runtime({ maxProcesses: n, workers: n });
  const pids = await runtime.runApp(async (app) => {
    const handles = [];
    for (let i = 0; i < n; i++) {
      handles.push(
        await app.forkWorker<number, number>(TASK, i, {
          export: "tiny",
          isolation: impl as "thread",
        }),
      );
    }
    await Promise.all(handles.map((h) => app.awaitResult(h)));
    if (impl !== "process") return [];
    return Promise.all(
      Array.from(
        { length: n },
        async () =>
          app.awaitResult(
            await app.forkWorker<string, number>(
              new URL("../tests/workers/scripts.ts", import.meta.url),
              "",
              { export: "pid", isolation: "process" },
            ),
          ),
      ),
    );
  });
  const after = await rssOf(Deno.pid);
  let children = 0;
  for (const pid of new Set(pids)) children += await rssOf(pid);
  out({ bytesPerWorker: (after - before + children) / n });
} else if (what === "replace") {
  // A worker running a runaway script is stopped (graceMs 0) and the next fork's result arrives.
  await using runtime = new Runtime({ maxProcesses: 1, workers: 1 });
  const isolation = impl as "thread" | "process";
  const times: number[] = [];
  await runtime.runApp(async (app) => {
    await app.awaitResult(await app.forkWorker(TASK, 1, { export: "tiny", isolation }));
    for (let i = 0; i < n; i++) {
      const script = isolation === "process" ? "spin" : "hashTask";
      const stuck = await app.forkWorker(TASK, 2_000, { export: script, isolation, graceMs: 0 });
      const start = performance.now();
      stuck.cancel();
      await app.awaitResult(stuck).catch(() => {});
      await app.awaitResult(await app.forkWorker(TASK, 1, { export: "tiny", isolation }));
      times.push(performance.now() - start);
    }
  });
  out({ ms: times });
}
