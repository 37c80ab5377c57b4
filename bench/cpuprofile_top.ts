// Top self-time functions of a V8 .cpuprofile (as written by `deno run --cpu-prof`):
//   deno run --allow-read bench/cpuprofile_top.ts <file.cpuprofile> [--top=25]
// Prints two Markdown tables: functions by self time (share of all samples,
// idle excluded) and the same time summed per source file.

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

const args = Deno.args.filter((arg) => !arg.startsWith("--"));
const topArg = Deno.args.find((arg) => arg.startsWith("--top="));
const top = topArg === undefined ? 25 : Number(topArg.slice("--top=".length));
if (args.length !== 1) {
  console.error("usage: cpuprofile_top.ts <file.cpuprofile> [--top=25]");
  Deno.exit(2);
}
const profile = JSON.parse(await Deno.readTextFile(args[0])) as CpuProfile;

// Self time per node: the time delta that follows each sample of it.
const selfUs = new Map<number, number>();
const samples = profile.samples ?? [];
const deltas = profile.timeDeltas ?? [];
for (let i = 0; i < samples.length; i++) {
  const delta = deltas[i + 1] ?? 0;
  selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + Math.max(0, delta));
}

const repo = new URL("..", import.meta.url).href;
function where(frame: CallFrame): string {
  if (frame.url === "") return "(native)";
  if (frame.url.startsWith(repo)) return frame.url.slice(repo.length);
  return frame.url.replace(/^.*registry\.npmjs\.org\//, "npm:");
}

const byFunction = new Map<string, { name: string; file: string; us: number }>();
const byFile = new Map<string, number>();
let totalUs = 0;
let idleUs = 0;
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (us === 0) continue;
  const frame = node.callFrame;
  if (frame.functionName === "(idle)") {
    idleUs += us;
    continue;
  }
  totalUs += us;
  const file = where(frame);
  const name = frame.functionName || "(anonymous)";
  const key = `${name}\u0000${file}:${frame.lineNumber + 1}`;
  const entry = byFunction.get(key) ??
    { name, file: frame.url === "" ? file : `${file}:${frame.lineNumber + 1}`, us: 0 };
  entry.us += us;
  byFunction.set(key, entry);
  byFile.set(file, (byFile.get(file) ?? 0) + us);
}

const pct = (us: number) => `${((100 * us) / totalUs).toFixed(1)} %`;
const ms = (us: number) => (us / 1000).toFixed(1);
console.log(
  `busy ${ms(totalUs)} ms (idle ${ms(idleUs)} ms excluded), ${samples.length} samples\n`,
);
console.log("| function | where | self ms | self % |\n| --- | --- | ---: | ---: |");
for (const entry of [...byFunction.values()].sort((a, b) => b.us - a.us).slice(0, top)) {
  console.log(`| ${entry.name} | ${entry.file} | ${ms(entry.us)} | ${pct(entry.us)} |`);
}
console.log("\n| file | self ms | self % |\n| --- | ---: | ---: |");
for (const [file, us] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`| ${file} | ${ms(us)} | ${pct(us)} |`);
}
