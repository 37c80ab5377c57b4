// Redraws BENCHMARKS.svg from the tables in BENCHMARKS.md, without rerunning
// anything (bench:peers draws it itself at the end of a full run):
//
//   deno run --allow-read --allow-write=BENCHMARKS.svg bench/chart.ts
import { parseTables, renderChart } from "./_chart.ts";

const markdown = await Deno.readTextFile(new URL("../BENCHMARKS.md", import.meta.url));
const commit = /^- procpool: (.+)$/m.exec(markdown)?.[1] ?? "an unknown commit";
const svg = renderChart(parseTables(markdown), commit);
await Deno.writeTextFile(new URL("../BENCHMARKS.svg", import.meta.url), svg);
console.error(`BENCHMARKS.svg drawn from BENCHMARKS.md (procpool ${commit})`);
