// One implementation's throughput, in a fresh process:
//   deno run --allow-env --allow-read bench/peer_runner.ts <impl> <N> <concurrency> [runs]
// A warm-up run, then `runs` measured runs (default 3), each checked for
// correctness. Prints {impl, n, concurrency, ms: [...]} as one JSON line.
import { impls } from "./_impls.ts";
import { checkResults, collectGarbage, emit, intArg, range } from "./_shared.ts";

const [name, nArg, concurrencyArg, runsArg] = Deno.args;
const impl = impls[name];
if (impl === undefined) {
  console.error(`unknown implementation ${JSON.stringify(name)}; one of:`);
  for (const known of Object.keys(impls)) console.error(`  ${known}`);
  Deno.exit(2);
}
const n = intArg(nArg, 200_000);
const concurrency = intArg(concurrencyArg, 8);
const runs = intArg(runsArg, 3);
const items = range(n);

checkResults(`${name} (warm-up)`, await impl(items, concurrency), n);
const ms: number[] = [];
for (let r = 0; r < runs; r++) {
  collectGarbage();
  const start = performance.now();
  const results = await impl(items, concurrency);
  ms.push(performance.now() - start);
  checkResults(name, results, n);
}
emit({ impl: name, n, concurrency, ms });
