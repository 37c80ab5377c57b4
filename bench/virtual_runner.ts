// Virtual-clock throughput: P processes each doing D delays on a test
// runtime (auto-advancing VirtualClock), all running at once:
//   deno run --allow-env --allow-read --v8-flags=--expose-gc bench/virtual_runner.ts [P] [D] [runs]
// Delays vary per process (1..10 ms) so the clock visits many instants and the
// sleeper heap does real work. Prints delay events per second per run.
import { createTestRuntime } from "../testing.ts";
import { checkResults, collectGarbage, emit, intArg, range } from "./_shared.ts";

const [processesArg, delaysArg, runsArg] = Deno.args;
const processes = intArg(processesArg, 10_000);
const delays = intArg(delaysArg, 100);
const runs = intArg(runsArg, 3);

const stepOf = (i: number) => 1 + (i % 10);

async function once(p: number, d: number): Promise<number> {
  await using runtime = createTestRuntime({ maxProcesses: p, seed: 1 });
  const start = performance.now();
  const results = await runtime.runApp((app) =>
    app.forkAll(range(p), async (i, lang) => {
      const step = stepOf(i);
      for (let k = 0; k < d; k++) await lang.delay(step);
      return i;
    })
  );
  const ms = performance.now() - start;
  checkResults("virtual", results, p);
  const expectedEnd = d * Math.max(...range(Math.min(p, 10)).map(stepOf));
  if (runtime.clock.now() !== expectedEnd) {
    throw new Error(`virtual clock reads ${runtime.clock.now()}, expected ${expectedEnd}`);
  }
  if (runtime.trace.length !== p * d) {
    throw new Error(`trace has ${runtime.trace.length} events, expected ${p * d}`);
  }
  return ms;
}

// A full-size warm-up, as the other runners do: the JIT and the heap settle first.
await once(processes, delays);
const ms: number[] = [];
for (let r = 0; r < runs; r++) {
  collectGarbage();
  ms.push(await once(processes, delays));
}
emit({ processes, delays, events: processes * delays, ms });
