/**
 * CPU-bound work through the pool: the same plate analyses as ordinary
 * processes (one thread: they take turns) and as worker processes (worker
 * threads: they run in parallel), with the time of each and the speed-up.
 *
 * ```sh
 * deno run --allow-env --allow-read examples/plate_analysis_main.ts [--plates 16] [--passes 20]
 * ```
 *
 * @module
 */
import { Runtime } from "../mod.ts";
import { analyse, exposePlate, type PlateReport } from "./plate_analysis.ts";
import { parseNumberFlags, runMain } from "./_cli.ts";

const WORKER = new URL("./plate_analysis.ts", import.meta.url);

/** Analyses `plates` plates both ways; returns both reports and timings. */
export async function comparePlates(
  plates: number,
  passes: number,
  size = 256,
): Promise<{ inline: PlateReport[]; workers: PlateReport[]; inlineMs: number; workerMs: number }> {
  const exposed = Array.from({ length: plates }, (_, id) => exposePlate(id, size));
  await using runtime = new Runtime({ maxProcesses: navigator.hardwareConcurrency });
  // Start the worker threads before timing: a pool is kept warm, not cold-started per batch.
  await runtime.runApp((app) =>
    Promise.all(
      Array.from({ length: navigator.hardwareConcurrency }, async () =>
        app.awaitResult(
          await app.forkWorker(WORKER, { plate: exposed[0], passes: 0 }, {
            export: "analysePlate",
          }),
        )),
    )
  );
  let start = performance.now();
  const inline = await runtime.runApp((app) =>
    app.forkAll(exposed, (plate) => analyse(plate, passes))
  );
  const inlineMs = performance.now() - start;
  start = performance.now();
  const workers = await runtime.runApp(async (app) => {
    const handles = [];
    for (const plate of exposed) {
      handles.push(
        await app.forkWorker<unknown, PlateReport>(WORKER, { plate, passes }, {
          export: "analysePlate",
        }),
      );
    }
    return Promise.all(handles.map((handle) => app.awaitResult(handle)));
  });
  const workerMs = performance.now() - start;
  return { inline, workers, inlineMs, workerMs };
}

if (import.meta.main) {
  await runMain(async (args) => {
    const { plates, passes } = parseNumberFlags(args, {
      plates: { default: 16, min: 1, integer: true },
      passes: { default: 20, min: 0, integer: true },
    });
    const result = await comparePlates(plates, passes);
    const same = JSON.stringify(result.inline) === JSON.stringify(result.workers);
    console.log(
      `${plates} plates, ${passes} blur passes each, ${navigator.hardwareConcurrency} cores`,
    );
    console.log(`  forkProcess (one thread): ${result.inlineMs.toFixed(0)} ms`);
    console.log(`  forkWorker (threads):     ${result.workerMs.toFixed(0)} ms`);
    console.log(
      `  speed-up: ${(result.inlineMs / result.workerMs).toFixed(2)}×; same reports: ${same}`,
    );
  });
}
