// The "latency" part of `deno task bench:peers`: release→start of a queued
// fork, 8 slots and 1 000 waiters, in three fresh processes per
// implementation (interleaved, so that a noisy minute hits all of them). Each
// process times a first round, which mostly runs the hand-off path for the
// first time, then a warm round on the same pool; the samples of each kind
// are pooled over the three processes.
import { GUARDED_FLOOR } from "./_sections.ts";
import { fmt, markdownTable, median, percentile, runScript, TIMED_OUT } from "./_shared.ts";

const RUNS = 3;
const POLICIES = ["fifo", "backoff", "p-limit", "ref-minimal", "ref-guarded"] as const;
const LABELS: Record<string, string> = {
  "p-limit": "p-limit (reference)",
  "ref-minimal": "ref: minimal fork+await",
  "ref-guarded": GUARDED_FLOOR,
};
const log = (message: string) => console.error(`… ${message}`);

interface RoundResult {
  latenciesUs: number[];
  idleWallMs: number;
  idleCpuMs: number;
  handoffWallMs: number;
  handoffCpuMs: number;
}

interface RunnerResult {
  cold: RoundResult;
  warm: RoundResult;
}

/** Pooled release→start figures of one implementation, in µs. */
export interface HandOff {
  readonly medianUs: number;
  readonly p99Us: number;
  readonly coldMedianUs: number;
  readonly coldP99Us: number;
}

export interface Latency {
  /** by policy ("fifo", "backoff", "p-limit", "ref-minimal", "ref-guarded") */
  readonly byPolicy: Record<string, HandOff>;
  readonly markdown: string;
}

export async function latency(waiters: number, capacity: number): Promise<Latency> {
  const runs: Record<string, RunnerResult[]> = {};
  for (let run = 1; run <= RUNS; run++) {
    for (const policy of POLICIES) {
      log(`latency: ${policy}, run ${run} of ${RUNS}`);
      const r = await runScript<RunnerResult>("latency_runner.ts", [policy, waiters, capacity]);
      if (r === TIMED_OUT) throw new Error("unreachable: no timeout");
      (runs[policy] ??= []).push(r);
    }
  }
  const byPolicy: Record<string, HandOff> = {};
  const rows = POLICIES.map((policy) => {
    const results = runs[policy]!;
    const warm = results.flatMap((r) => r.warm.latenciesUs);
    const cold = results.flatMap((r) => r.cold.latenciesUs);
    byPolicy[policy] = {
      medianUs: median(warm),
      p99Us: percentile(warm, 99),
      coldMedianUs: median(cold),
      coldP99Us: percentile(cold, 99),
    };
    const idleCpu = median(results.map((r) => r.cold.idleCpuMs / (r.cold.idleWallMs / 1000)));
    return [
      LABELS[policy] ?? `procpool ${policy}`,
      fmt(byPolicy[policy].medianUs, 1),
      fmt(byPolicy[policy].p99Us, 1),
      fmt(Math.max(...warm)),
      fmt(byPolicy[policy].coldMedianUs, 1),
      fmt(byPolicy[policy].coldP99Us, 1),
      fmt(Math.max(...cold)),
      fmt(idleCpu, 1),
      fmt(median(results.map((r) => r.warm.handoffCpuMs))),
    ];
  });
  const markdown = markdownTable(
    [
      `${capacity} slots, ${fmt(waiters)} waiters, ${RUNS} runs`,
      "warm median µs",
      "warm p99 µs",
      "warm max µs",
      "first round median µs",
      "first round p99 µs",
      "first round max µs",
      "CPU ms/s while all wait",
      "warm round CPU ms",
    ],
    rows,
  );
  return { byPolicy, markdown };
}
