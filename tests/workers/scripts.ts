// Worker scripts for the worker tests: each export runs as (input, lang).
import type { LangL, SharedVar } from "../../mod.ts";

export default function double(n: number): number {
  return n * 2;
}

export async function sleepy(ms: number, lang: LangL): Promise<number> {
  await lang.delay(ms);
  return lang.now();
}

export async function counter(
  input: { counter: SharedVar<number>; times: number },
  lang: LangL,
): Promise<number> {
  for (let i = 0; i < input.times; i++) {
    await lang.modifyVar(input.counter, (c) => c + 1);
  }
  return await lang.readVar(input.counter);
}

export async function transfer(
  input: { from: SharedVar<number>; to: SharedVar<number>; amount: number },
  lang: LangL,
): Promise<string> {
  return await lang.atomically([input.from, input.to], (tx) => {
    tx.write(input.from, tx.read(input.from) - input.amount);
    tx.write(input.to, tx.read(input.to) + input.amount);
    return "moved";
  });
}

export class ObservatoryError extends Error {
  constructor(message: string, readonly code: number) {
    super(message);
    this.name = "ObservatoryError";
  }
}

export async function fail(message: string, lang: LangL): Promise<never> {
  await lang.delay(1);
  throw new ObservatoryError(message, 7);
}

export function spin(): never {
  while (true) { /* a runaway script */ }
}

/** Busy for `ms` of real time, then returns how many rounds it made. */
export function busy(ms: number): number {
  const end = performance.now() + ms;
  let rounds = 0;
  while (performance.now() < end) rounds++;
  return rounds;
}

export function randoms(n: number, lang: LangL): number[] {
  return Array.from({ length: n }, () => lang.random());
}

export function logs(message: string, lang: LangL): number {
  lang.logInfo(message, { from: "worker" });
  lang.logWarning("{message} again", { message });
  return lang.processId;
}

export function closeSelf(): Promise<never> {
  (globalThis as unknown as { close(): void }).close();
  return new Promise(() => {});
}

export async function throwInTimer(_: unknown, lang: LangL): Promise<never> {
  setTimeout(() => {
    throw new Error("boom in a timer");
  }, 0);
  await lang.delay(60_000);
  throw new Error("unreachable");
}

export function uncloneable(): () => number {
  return () => 1;
}

export async function signalAware(_: unknown, lang: LangL): Promise<string> {
  try {
    await lang.delay(60_000);
    return "not cancelled";
  } catch (error) {
    lang.logInfo("cleaning up after {name}", { name: (error as Error).name });
    throw error;
  }
}

export async function ignoresCancel(ms: number, lang: LangL): Promise<string> {
  try {
    await lang.delay(ms);
  } catch {
    // carry on
  }
  return "finished anyway";
}

/** For the determinism test: delays, random draws, a shared variable, logs. */
export async function observe(
  input: { tally: SharedVar<number[]>; id: number },
  lang: LangL,
): Promise<number> {
  let total = 0;
  for (let round = 0; round < 3; round++) {
    await lang.delay(10 * lang.getRandomInt(1, 5) + 1);
    const size = lang.getRandomInt(1, 100);
    total += size;
    lang.logInfo("worker {id} saw {size}", { id: input.id, size });
    await lang.modifyVar(input.tally, (all) => [...all, size]);
  }
  return total;
}

export async function hour(_: unknown, lang: LangL): Promise<number> {
  for (let i = 0; i < 60; i++) await lang.delay(60_000);
  return lang.now();
}

export function pid(): number {
  return Deno.pid;
}

export function exit(code: number): never {
  Deno.exit(code);
}

/** The fencing token the worker's LangL sees (the host's lease on a shared capacity). */
export function fence(_: unknown, lang: LangL): number | undefined {
  return lang.fence;
}

/** A plain object whose own Symbol.toStringTag getter throws (structured clone ignores it). */
export function throwingTag(): unknown {
  return {
    a: 1,
    get [Symbol.toStringTag](): string {
      throw new Error("the tag was read");
    },
  };
}

/** Its input, as it arrived (and crosses back). */
export function echo(value: unknown): unknown {
  return value;
}

/** Returns at once, leaving a timer behind that counts in this worker's global scope. */
export function leaveTimer(): number {
  setTimeout(() => {
    const scope = globalThis as { leftTimers?: number };
    scope.leftTimers = (scope.leftTimers ?? 0) + 1;
  }, 0);
  return 0;
}

/** How many timers left behind by `leaveTimer` have fired in this worker. */
export function leftTimers(): number {
  return (globalThis as { leftTimers?: number }).leftTimers ?? 0;
}

/**
 * Leaves a timer and a promise callback behind, and says how many of each
 * (left by earlier runs) have fired in this worker so far.
 */
export function timersAndTicks(): [number, number] {
  const scope = globalThis as { firedTimers?: number; firedTicks?: number };
  setTimeout(() => scope.firedTimers = (scope.firedTimers ?? 0) + 1, 0);
  Promise.resolve().then(() => scope.firedTicks = (scope.firedTicks ?? 0) + 1);
  return [scope.firedTimers ?? 0, scope.firedTicks ?? 0];
}

/** Returns at once; logs in a promise callback it queued before returning. */
export function lateLog(message: string, lang: LangL): number {
  Promise.resolve().then(() => lang.logInfo(message));
  return 1;
}

/**
 * Returns values whose getters count their reads (an object's getter, an
 * accessor on an array element, a log's property), with `NaN` beside them
 * when `fallback` is set (JSON cannot carry that, so the batch goes by
 * structured clone). `getterReads` says, in the next run, how many reads each
 * saw.
 */
export function getters(fallback: boolean, lang: LangL): unknown {
  const reads = [0, 0, 0];
  (globalThis as { getterReads?: number[] }).getterReads = reads;
  const counted = (i: number) => ({ get: () => ++reads[i], enumerable: true });
  const object = Object.defineProperty({}, "a", counted(0));
  const array = Object.defineProperty([0, 0], 1, counted(1));
  const logged = Object.defineProperty({}, "p", counted(2));
  lang.logInfo("getters", { logged, nan: fallback ? NaN : 0 });
  return { object, array, nan: fallback ? NaN : 0 };
}

/** How many times each getter of the last `getters` run was read. */
export function getterReads(): number[] | undefined {
  return (globalThis as { getterReads?: number[] }).getterReads;
}

/** Logs for `ms` of real time, a log a microtask; returns how many it logged. */
export async function flood(ms: number, lang: LangL): Promise<number> {
  const end = performance.now() + ms;
  let n = 0;
  while (performance.now() < end) {
    lang.logInfo("flood {n}", { n: n++ });
    await null;
  }
  return n;
}

/** Logs `n` times in one synchronous loop. */
export function floodSync(n: number, lang: LangL): number {
  for (let i = 0; i < n; i++) lang.logInfo("flood {i}", { i });
  return n;
}

/** A process worker's script that sends a frame the runtime cannot decode, then waits. */
export async function garbageFrame(_: unknown, lang: LangL): Promise<never> {
  const payload = new Uint8Array([1, ...new TextEncoder().encode("{ not json")]);
  const bytes = new Uint8Array(4 + payload.length);
  new DataView(bytes.buffer).setUint32(0, payload.length, true);
  bytes.set(payload, 4);
  Deno.stdout.writeSync(bytes);
  await lang.delay(3_600_000);
  throw new Error("the runtime took a frame it cannot decode");
}
