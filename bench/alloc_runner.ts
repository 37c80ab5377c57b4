// Bytes allocated per task, in a fresh process whose young generation is big
// enough that no GC runs during a measured run (so heapUsed only grows):
//   deno run --allow-env --allow-read \
//     --v8-flags=--expose-gc,--min-semi-space-size=256,--max-semi-space-size=256 \
//     bench/alloc_runner.ts <impl> [N=10000] [concurrency=8]
// Prints {impl, n, bytesPerTask: [...]} (three runs after a warm-up).
import { impls } from "./_impls.ts";
import { checkResults, collectGarbage, emit, intArg, range } from "./_shared.ts";

const [name, nArg, concurrencyArg] = Deno.args;
const impl = impls[name];
if (impl === undefined) {
  console.error(`unknown implementation ${JSON.stringify(name)}`);
  Deno.exit(2);
}
const n = intArg(nArg, 10_000);
const concurrency = intArg(concurrencyArg, 8);
const items = range(n);

checkResults(name, await impl(items, concurrency), n);
const bytesPerTask: number[] = [];
for (let r = 0; r < 3; r++) {
  collectGarbage();
  const before = Deno.memoryUsage().heapUsed;
  const results = await impl(items, concurrency);
  const after = Deno.memoryUsage().heapUsed;
  checkResults(name, results, n);
  // A scavenge during the run would show up as a drop; refuse to report it.
  if (after <= before) throw new Error(`${name}: a GC ran during the measurement`);
  bytesPerTask.push((after - before) / n);
}
emit({ impl: name, n, bytesPerTask });
