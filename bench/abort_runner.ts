// Aborting many queued tasks that share one AbortSignal, in a fresh process:
//   deno run --allow-env --allow-read --v8-flags=--expose-gc bench/abort_runner.ts <impl> <N> [runs]
// `CAPACITY` tasks block on a gate, N more are queued behind them with the
// same signal, then the time from `abort()` until every queued task's promise
// has rejected is measured. Each run checks that all N rejected with the
// signal's reason and that the blocked tasks still complete. Prints
// {impl, n, ms: [...]} as one JSON line.
import PQueue from "p-queue";
import { Runtime } from "../mod.ts";
import { collectGarbage, emit, intArg } from "./_shared.ts";

const CAPACITY = 8;

type Variant = (n: number) => Promise<number>;

/** Times `abort()` until all of `queued` settled; checks they rejected with the reason. */
async function timeAbort(controller: AbortController, queued: Promise<unknown>[]): Promise<number> {
  const reason = new Error("aborted on purpose");
  const start = performance.now();
  controller.abort(reason);
  const outcomes = await Promise.allSettled(queued);
  const ms = performance.now() - start;
  const wrong = outcomes.filter((o) => o.status !== "rejected" || o.reason !== reason).length;
  if (wrong > 0) throw new Error(`${wrong} of ${queued.length} did not reject with the reason`);
  return ms;
}

const variants: Record<string, Variant> = {
  async procpool(n) {
    await using runtime = new Runtime({ maxProcesses: CAPACITY });
    return await runtime.runApp(async (app) => {
      const gate = Promise.withResolvers<void>();
      const blocked = [];
      for (let b = 0; b < CAPACITY; b++) blocked.push(await app.forkProcess(() => gate.promise));
      const controller = new AbortController();
      const signal = controller.signal;
      const queued = [];
      for (let i = 0; i < n; i++) queued.push(app.forkProcess(() => i, { signal }));
      if (runtime.stats().waiting !== n) throw new Error("procpool: not all forks queued");
      const ms = await timeAbort(controller, queued);
      if (runtime.stats().waiting !== 0) throw new Error("procpool: forks left in the queue");
      gate.resolve();
      for (const handle of blocked) await app.awaitResult(handle);
      return ms;
    });
  },

  async "p-queue"(n) {
    const queue = new PQueue({ concurrency: CAPACITY });
    const gate = Promise.withResolvers<void>();
    const blocked = [];
    for (let b = 0; b < CAPACITY; b++) blocked.push(queue.add(() => gate.promise));
    const controller = new AbortController();
    const signal = controller.signal;
    const queued = [];
    for (let i = 0; i < n; i++) queued.push(queue.add(() => i, { signal }));
    if (queue.size !== n) throw new Error("p-queue: not all tasks queued");
    const ms = await timeAbort(controller, queued);
    gate.resolve();
    await Promise.all(blocked);
    await queue.onIdle();
    if (queue.size !== 0) throw new Error("p-queue: tasks left in the queue");
    return ms;
  },
};

const [name, nArg, runsArg] = Deno.args;
const variant = variants[name];
if (variant === undefined) {
  console.error(`unknown variant ${JSON.stringify(name)}; one of: ${Object.keys(variants)}`);
  Deno.exit(2);
}
const n = intArg(nArg, 100_000);
const runs = intArg(runsArg, 3);
const ms: number[] = [];
for (let r = 0; r < runs; r++) {
  collectGarbage();
  ms.push(await variant(n));
}
emit({ impl: name, n, ms });
