/**
 * A long-lived scope's memory over many failures nobody awaits: heap used
 * after `gc()`, with `onFailure` (each failure reported and dropped) and
 * without (each held for the scope's end, as API rule 5 requires), measured
 * in the same run on the test runtime.
 *
 * ```sh
 * deno run --allow-env --v8-flags=--expose-gc bench/long_lived.ts [count]
 * ```
 *
 * @module
 */
import { createTestRuntime } from "../testing.ts";
import type { ScopeOptions } from "../mod.ts";

const count = Number(Deno.args[0] ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --v8-flags=--expose-gc");

function heapMb(): number {
  gc!();
  return Deno.memoryUsage().heapUsed / 1e6;
}

/** Heap used, in MB, once `count` processes have failed inside one still-open scope. */
async function heapAfterFailures(options: ScopeOptions | undefined): Promise<number> {
  await using runtime = createTestRuntime({ maxProcesses: 8, seed: 1 });
  let used = 0;
  await runtime.runApp(async (app) => {
    for (let i = 1; i <= count; i++) {
      await app.forkProcess(() => {
        throw new Error(`job ${i} failed`);
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
    used = heapMb();
  }, options).catch(() => {}); // without onFailure it rejects with an AggregateError
  return used;
}

const baseline = heapMb();
let reported = 0;
const withHandler = await heapAfterFailures({ onFailure: () => void reported++ });
const without = await heapAfterFailures(undefined);
console.log(
  `${count.toLocaleString("en")} failures nobody awaited, one open scope, heap used after gc():`,
);
console.log(`  baseline          ${baseline.toFixed(1)} MB`);
console.log(`  with onFailure    ${withHandler.toFixed(1)} MB  (${reported} reported)`);
console.log(`  without           ${without.toFixed(1)} MB  (all held until the scope ends)`);
