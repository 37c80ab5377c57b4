// Two throughput implementations in one process, run alternately, for an
// A/B comparison on a busy machine (where fresh processes scatter by up to
// 2× within minutes, and neighbouring runs share the machine's state):
//   deno run --allow-env --allow-read --v8-flags=--expose-gc bench/pair_runner.ts \
//     <dirA> <implA> <dirB> <implB> [rounds=16] [N=200000] [concurrency=8]
// dirA and dirB are checkouts (absolute paths) whose bench/_impls.ts are
// loaded side by side, e.g. a copy of main in /tmp and a work tree; run it
// from a checkout whose deno.json resolves both. After two warm-up runs each,
// every round runs A and B once (alternating which goes first) after a
// forced GC and reads the process's CPU time around each run. Prints one JSON
// line: each side's wall and CPU milliseconds, and the median of the
// per-round B/A ratios.
import process from "node:process";
import { checkResults, collectGarbage, emit, intArg, median, range } from "./_shared.ts";
import type { Impl } from "./_impls.ts";

const [dirA, implA, dirB, implB, roundsArg, nArg, concurrencyArg] = Deno.args;
const rounds = intArg(roundsArg, 16);
const n = intArg(nArg, 200_000);
const concurrency = intArg(concurrencyArg, 8);
const items = range(n);

async function load(dir: string, name: string): Promise<Impl> {
  const { impls } = await import(`${dir}/bench/_impls.ts`) as { impls: Record<string, Impl> };
  const impl = impls[name];
  if (impl === undefined) throw new Error(`no implementation ${JSON.stringify(name)} in ${dir}`);
  return impl;
}

const sides = [
  { label: "A", impl: await load(dirA, implA), wallMs: [] as number[], cpuMs: [] as number[] },
  { label: "B", impl: await load(dirB, implB), wallMs: [] as number[], cpuMs: [] as number[] },
];
for (let warm = 0; warm < 2; warm++) {
  for (const side of sides) {
    checkResults(`${side.label} (warm-up)`, await side.impl(items, concurrency), n);
  }
}
for (let round = 0; round < rounds; round++) {
  for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
    collectGarbage();
    const cpu = process.cpuUsage();
    const start = performance.now();
    const results = await side.impl(items, concurrency);
    side.wallMs.push(performance.now() - start);
    const used = process.cpuUsage(cpu);
    side.cpuMs.push((used.user + used.system) / 1000);
    checkResults(side.label, results, n);
  }
}
const [a, b] = sides;
const ratios = (of: (side: typeof a) => number[]) => of(b).map((value, i) => value / of(a)[i]);
emit({
  a: { dir: dirA, impl: implA, wallMs: a.wallMs, cpuMs: a.cpuMs },
  b: { dir: dirB, impl: implB, wallMs: b.wallMs, cpuMs: b.cpuMs },
  pairedCpuRatio: median(ratios((side) => side.cpuMs)),
  pairedWallRatio: median(ratios((side) => side.wallMs)),
});
