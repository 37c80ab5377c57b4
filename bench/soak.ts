/**
 * Soak: a million processes through 64 slots on the system clock, each
 * sleeping a real 0–2 ms; 10 % throw and 10 % are cancelled. Prints the
 * throughput, the final stats and the RSS at 0/25/50/75/100 %, and exits
 * non-zero if the counts do not add up or memory keeps growing after the
 * first quarter.
 *
 *   deno task soak               # 1 000 000 processes
 *   deno task soak --count 50000 # a quick run
 *
 * Forks are fed one at a time (await forkProcess, then awaitResult without
 * waiting for it), so at most 64 processes and 65 pending results exist at
 * once: nothing is allocated up front for the million.
 *
 * The memory check starts at 25 % because Deno's own timers raise RSS (not
 * the JS heap) over the first ~200 000 setTimeout calls before it levels off;
 * a bare setTimeout loop without procpool does the same. A quick run with a
 * small --count can therefore fail the RSS check without any leak.
 *
 * @module
 */
import { type LangL, ProcessCancelledError, ProcessFailedError, Runtime } from "../mod.ts";

function parseCount(args: string[]): number {
  const index = args.findIndex((a) => a === "--count" || a.startsWith("--count="));
  if (index < 0) return 1_000_000;
  const raw = args[index].includes("=") ? args[index].split("=")[1] : args[index + 1];
  const count = Number(raw);
  if (!Number.isSafeInteger(count) || count < 4) {
    throw new RangeError(`--count must be an integer >= 4, got ${raw}`);
  }
  return count;
}

const COUNT = parseCount(Deno.args);
const CAPACITY = 64;
const GROWTH_LIMIT = 1.10;
const gc = (globalThis as { gc?: () => void }).gc;

interface Sample {
  percent: number;
  processes: number;
  rssMb: number;
  heapMb: number;
  seconds: number;
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024 * 10) / 10;
const started = performance.now();
const samples: Sample[] = [];
function sample(percent: number, processes: number): void {
  // Collect twice: the first pass can leave finalisable garbage for the second.
  gc?.();
  gc?.();
  const { rss, heapUsed } = Deno.memoryUsage();
  const seconds = (performance.now() - started) / 1000;
  samples.push({ percent, processes, rssMb: mb(rss), heapMb: mb(heapUsed), seconds });
}

async function succeed(lang: LangL): Promise<number> {
  await lang.delay(lang.getRandomInt(0, 2));
  return 1;
}

async function fail(lang: LangL): Promise<never> {
  await lang.delay(lang.getRandomInt(0, 2));
  throw new Error("a planned soak failure");
}

const outcomes = { succeeded: 0, failed: 0, cancelled: 0, unexpected: 0 };
const onValue = () => outcomes.succeeded++;
const onError = (error: unknown) => {
  if (error instanceof ProcessFailedError) outcomes.failed++;
  else if (error instanceof ProcessCancelledError) outcomes.cancelled++;
  else outcomes.unexpected++;
};

await using runtime = new Runtime({ maxProcesses: CAPACITY, seed: 2024 });
const quarters = [0, 1, 2, 3].map((q) => Math.floor(COUNT * q / 4));
await runtime.runApp(async (app) => {
  for (let i = 0; i < COUNT; i++) {
    const quarter = quarters.indexOf(i);
    if (quarter >= 0) sample(quarter * 25, i);
    // Every tenth throws, every tenth (another residue) is cancelled once running.
    const kind = i % 10;
    const handle = await app.forkProcess(kind === 0 ? fail : succeed);
    if (kind === 1) handle.cancel("the soak cancels every tenth process");
    // Observed, so failures do not pile up as unobserved in the scope.
    app.awaitResult(handle).then(onValue, onError);
  }
});
sample(100, COUNT);

const elapsed = (performance.now() - started) / 1000;
const stats = runtime.stats();
const expectedFailed = Math.ceil(COUNT / 10);
const expectedCancelled = Math.floor((COUNT - 2) / 10) + 1;
const checks: [string, boolean][] = [
  ["active 0, waiting 0", stats.active === 0 && stats.waiting === 0],
  [`started == ${COUNT}`, stats.started === COUNT],
  [
    "started == succeeded + failed + cancelled",
    stats.started === stats.succeeded + stats.failed + stats.cancelled,
  ],
  [
    `failed == ${expectedFailed}, cancelled == ${expectedCancelled}`,
    stats.failed === expectedFailed && stats.cancelled === expectedCancelled,
  ],
  [
    "every awaitResult delivered what the stats count",
    outcomes.unexpected === 0 && outcomes.succeeded === stats.succeeded &&
    outcomes.failed === stats.failed && outcomes.cancelled === stats.cancelled,
  ],
];
const base = samples[1].rssMb;
for (const s of samples.slice(2)) {
  checks.push([
    `RSS at ${s.percent} % <= ${GROWTH_LIMIT} x RSS at 25 % (${s.rssMb} <= ${
      Math.round(base * GROWTH_LIMIT * 10) / 10
    } MB)`,
    s.rssMb <= base * GROWTH_LIMIT,
  ]);
}

console.log(`procpool soak: ${COUNT.toLocaleString("en")} processes, capacity ${CAPACITY},`);
console.log(`  system clock, delay(0..2 ms) each, 10 % throw, 10 % cancelled`);
console.log(
  `  Deno ${Deno.version.deno}, V8 ${Deno.version.v8}, gc() ${gc ? "available" : "NOT available"}`,
);
console.log(
  `  time ${elapsed.toFixed(1)} s, throughput ${
    Math.round(COUNT / elapsed).toLocaleString("en")
  } processes/s`,
);
console.log(`  final stats ${JSON.stringify(stats)}`);
console.log("");
console.log("  progress   processes     elapsed   RSS (MB)   heap used (MB)");
for (const s of samples) {
  console.log(
    `  ${String(s.percent).padStart(6)} %  ${s.processes.toLocaleString("en").padStart(10)}  ${
      s.seconds.toFixed(1).padStart(8)
    } s  ${String(s.rssMb).padStart(8)}  ${String(s.heapMb).padStart(14)}`,
  );
}
console.log("");
for (const [label, passed] of checks) console.log(`  ${passed ? "PASS" : "FAIL"}  ${label}`);
if (checks.some(([, passed]) => !passed)) Deno.exitCode = 1;
