// Run by fork_stream_memory_test.ts with --v8-flags=--expose-gc: streams
// `count` items through forkStream and prints the heap in use (after a full
// GC) at a few points along the way, as one JSON line.
import { Runtime } from "../mod.ts";

const count = Number(Deno.args[0] ?? 1_000_000);
const gc = (globalThis as { gc?: () => void }).gc;
function heapUsed(): number {
  gc?.();
  return Deno.memoryUsage().heapUsed;
}

function* items(): Generator<number> {
  for (let i = 0; i < count; i++) yield i;
}

await using runtime = new Runtime({ maxProcesses: 8 });
const start = performance.now();
const samples: { at: number; heap: number }[] = [];
const every = Math.floor(count / 8);
let sum = 0;
let next = 0;
await runtime.runApp(async (app) => {
  const stream = app.forkStream(items(), (i) => i);
  for await (const i of stream) {
    if (i !== next++) throw new Error(`result ${i} out of order, expected ${next - 1}`);
    sum += i;
    if (i % every === 0) samples.push({ at: i, heap: heapUsed() });
  }
});
if (next !== count || sum !== (count * (count - 1)) / 2) throw new Error(`lost results: ${next}`);
console.log(
  JSON.stringify({ count, gc: gc !== undefined, ms: performance.now() - start, samples }),
);
