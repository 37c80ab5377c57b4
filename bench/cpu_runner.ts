// One measurement of the "cpu" bench section, in a fresh `deno run`; prints
// one JSON line. Usage: cpu_runner.ts <what> <impl> <n> [rounds]
//   what: cpu (n tasks of `rounds` hashing rounds) | tiny (n tiny tasks) |
//         memory (RSS per warm worker) | replace (time to replace a stopped worker)
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

async function procpool(
  isolation: "thread" | "process" | "inline",
  count: number,
  input: number,
  exportName: string,
): Promise<number> {
  await using runtime = new Runtime({ maxProcesses: CORES, workers: CORES });
  const run = () =>
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
    });
  await run(); // warm: the workers start here, not in the timed run
  const start = performance.now();
  await run();
  return performance.now() - start;
}

async function peer(name: string, count: number): Promise<number> {
  const tasks = Array.from({ length: count }, (_, i) => i);
  if (name === "piscina") {
    const { Piscina } = await import("piscina");
    const pool = new Piscina({
      filename: new URL("./cpu/piscina_task.mjs", import.meta.url).href,
      minThreads: CORES,
      maxThreads: CORES,
    });
    await Promise.all(tasks.map((i) => pool.run(i)));
    const start = performance.now();
    await Promise.all(tasks.map((i) => pool.run(i)));
    const ms = performance.now() - start;
    await pool.destroy();
    return ms;
  }
  if (name === "tinypool") {
    const { Tinypool } = await import("tinypool");
    const pool = new Tinypool({
      filename: new URL("./cpu/piscina_task.mjs", import.meta.url).href,
      minThreads: CORES,
      maxThreads: CORES,
    });
    await Promise.all(tasks.map((i) => pool.run(i)));
    const start = performance.now();
    await Promise.all(tasks.map((i) => pool.run(i)));
    const ms = performance.now() - start;
    await pool.destroy();
    return ms;
  }
  const workerpool = (await import("workerpool")).default;
  const pool = workerpool.pool(new URL("./cpu/workerpool_task.mjs", import.meta.url).pathname, {
    minWorkers: CORES,
    maxWorkers: CORES,
    workerType: "thread",
  });
  await Promise.all(tasks.map((i) => pool.exec("tiny", [i])));
  const start = performance.now();
  await Promise.all(tasks.map((i) => pool.exec("tiny", [i])));
  const ms = performance.now() - start;
  await pool.terminate();
  return ms;
}

async function rssOf(pid: number): Promise<number> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/status`] }).output();
  const kb = /VmRSS:\s+(\d+)/.exec(new TextDecoder().decode(out.stdout))?.[1];
  return Number(kb) * 1024;
}

if (what === "cpu") {
  out({ ms: await procpool(impl as "inline", n, rounds, "hashTask") });
} else if (what === "tiny") {
  const ms = impl.startsWith("procpool")
    ? await procpool(impl.slice("procpool ".length) as "thread", n, 1, "tiny")
    : await peer(impl, n);
  out({ ms });
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
