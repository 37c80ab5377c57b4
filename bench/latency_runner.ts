// Hand-off latency and CPU use while waiting, on the real system clock:
//   deno run --allow-env --allow-read bench/latency_runner.ts <fifo|backoff|p-limit|ref-minimal|ref-guarded> [waiters] [capacity]
// `capacity` processes hold every slot and `waiters` more queue behind them.
// 1. Idle: nobody releases for SETTLE_MS + IDLE_MS; CPU time is measured over
//    the last IDLE_MS (fifo should cost nothing; backoff polls).
// 2. Hand-off: one slot at a time is released and we time how long until the
//    next process starts running, until every waiter has started.
// The first round runs the hand-off path for the first time, so it mostly
// times V8's lazy compilation and tier-up; a second round on the same pool
// (no idle phase) times the warm path a long-lived program sees. Both are
// reported.
import process from "node:process";
import pLimit from "p-limit";
import { type AppL, backoff, fifo, Runtime } from "../mod.ts";
import { emit, intArg } from "./_shared.ts";
import { GuardedForkPool, MinimalForkPool } from "./_ref_pools.ts";

const SETTLE_MS = 2_000;
const IDLE_MS = 2_000;
/** Enough for every submission of the warm round to have queued. */
const WARM_SETTLE_MS = 200;

const [policy, waitersArg, capacityArg] = Deno.args;
const waiters = intArg(waitersArg, 1_000);
const capacity = intArg(capacityArg, 8);
const total = capacity + waiters;

/** Release functions of the processes now holding a slot, oldest first. */
const holding: (() => void)[] = [];
let started = 0;
let onStart: ((time: number) => void) | undefined;

/** Each process: note when it started, then hold its slot until released. */
function hold(): Promise<void> {
  const time = performance.now();
  started++;
  const { promise, resolve } = Promise.withResolvers<void>();
  holding.push(resolve);
  const notify = onStart;
  onStart = undefined;
  notify?.(time);
  return promise;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

type Submit = (fn: () => Promise<void>) => Promise<unknown>;

async function measure(submit: Submit) {
  const cold = await round(submit, SETTLE_MS, IDLE_MS);
  const warm = await round(submit, WARM_SETTLE_MS, 0);
  return { policy, waiters, capacity, cold, warm };
}

async function round(submit: Submit, settleMs: number, idleMs: number) {
  started = 0;
  const submitted: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) submitted.push(submit(hold));
  await sleep(settleMs);
  if (started !== capacity) throw new Error(`${started} started, expected ${capacity}`);
  const cpuBefore = process.cpuUsage();
  const idleStart = performance.now();
  if (idleMs > 0) await sleep(idleMs);
  const cpu = process.cpuUsage(cpuBefore);
  const idleWallMs = performance.now() - idleStart;
  if (started !== capacity) throw new Error("a waiter started while every slot was held");

  const latencies: number[] = [];
  const handoffCpuBefore = process.cpuUsage();
  const handoffStart = performance.now();
  while (started < total) {
    const next = new Promise<number>((resolve) => onStart = resolve);
    const release = holding.shift()!;
    const releasedAt = performance.now();
    release();
    latencies.push((await next) - releasedAt);
  }
  const handoffWallMs = performance.now() - handoffStart;
  const handoffCpu = process.cpuUsage(handoffCpuBefore);
  for (const release of holding.splice(0)) release();
  await Promise.all(submitted);
  const us = latencies.map((ms) => ms * 1000);
  return {
    latenciesUs: us.map((value) => Math.round(value * 100) / 100),
    idleWallMs,
    idleCpuMs: (cpu.user + cpu.system) / 1000,
    handoffWallMs,
    handoffCpuMs: (handoffCpu.user + handoffCpu.system) / 1000,
  };
}

async function withRuntime(runtime: Runtime) {
  await using pool = runtime;
  return await pool.runApp((app: AppL) => measure((fn) => app.forkProcess(fn)));
}

let result;
if (policy === "fifo") {
  result = await withRuntime(new Runtime({ maxProcesses: capacity, wait: fifo() }));
} else if (policy === "backoff") {
  result = await withRuntime(new Runtime({ maxProcesses: capacity, wait: backoff(), seed: 1 }));
} else if (policy === "ref-minimal") {
  const pool = new MinimalForkPool(capacity);
  result = await measure((fn) => pool.fork(fn));
} else if (policy === "ref-guarded") {
  const pool = new GuardedForkPool(capacity);
  result = await measure((fn) => pool.fork(fn));
} else if (policy === "p-limit") {
  const limit = pLimit(capacity);
  result = await measure((fn) => limit(fn));
} else {
  console.error(
    `unknown policy ${JSON.stringify(policy)}: fifo, backoff, p-limit, ref-minimal or ref-guarded`,
  );
  Deno.exit(2);
}
emit(result);
