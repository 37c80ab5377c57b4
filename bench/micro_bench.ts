// Micro benchmarks of single pool operations: `deno task bench`.
// Each iteration builds its own runtime outside the measured region
// (b.start() … b.end()) and disposes it before the next, so no state leaks
// from one iteration, or one benchmark, into another.
import { type AppL, Runtime } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

const CAPACITY = 8;

/** Fills every slot with a process that holds it until `release()`. */
async function fillSlots(app: AppL): Promise<() => void> {
  const gate = Promise.withResolvers<void>();
  for (let i = 0; i < CAPACITY; i++) await app.forkProcess(() => gate.promise);
  return () => gate.resolve();
}

const freeSlotProcesses: [string, () => number | Promise<number>][] = [
  ["forkProcess + awaitResult, free slot", () => 1],
  ["forkProcess + awaitResult, async process, free slot", async () => {
    await Promise.resolve();
    return 1;
  }],
];

for (const [name, process] of freeSlotProcesses) {
  Deno.bench(name, { group: "fork" }, async (b) => {
    await using runtime = new Runtime({ maxProcesses: CAPACITY });
    await runtime.runApp(async (app) => {
      b.start();
      const handle = await app.forkProcess(process);
      const value = await app.awaitResult(handle);
      b.end();
      if (value !== 1) throw new Error("wrong result");
    });
  });
}

Deno.bench("forkProcess via hand-off from the wait queue", { group: "fork" }, async (b) => {
  await using runtime = new Runtime({ maxProcesses: CAPACITY });
  await runtime.runApp(async (app) => {
    // One holder is released per iteration; its slot is handed to the queued fork.
    const gates = Array.from({ length: CAPACITY }, () => Promise.withResolvers<void>());
    for (const gate of gates) await app.forkProcess(() => gate.promise);
    b.start();
    const queued = app.forkProcess(() => 1);
    gates[0].resolve();
    const value = await app.awaitResult(await queued);
    b.end();
    if (value !== 1) throw new Error("wrong result");
    for (const gate of gates) gate.resolve();
  });
});

Deno.bench("tryForkProcess when full", { group: "fork" }, async (b) => {
  await using runtime = new Runtime({ maxProcesses: CAPACITY });
  await runtime.runApp(async (app) => {
    const release = await fillSlots(app);
    b.start();
    const handle = app.tryForkProcess(() => 1);
    b.end();
    release();
    if (handle !== undefined) throw new Error("a full pool gave a slot");
  });
});

const readVarRuntimes: [string, () => Runtime][] = [
  ["readVar (Runtime, in evalLang)", () => new Runtime({ maxProcesses: CAPACITY })],
  [
    "readVar (createTestRuntime, traced)",
    () => createTestRuntime({ maxProcesses: CAPACITY, seed: 1 }),
  ],
];

for (const [name, create] of readVarRuntimes) {
  Deno.bench(name, { group: "lang" }, async (b) => {
    await using runtime = create();
    await runtime.runApp(async (app) => {
      const variable = app.newVar(42);
      await app.evalLang(async (lang) => {
        b.start();
        const value = await lang.readVar(variable);
        b.end();
        if (value !== 42) throw new Error("wrong value");
      });
    });
  });
}

Deno.bench(
  "delay(0) on the virtual clock (one auto-advance turn)",
  { group: "lang" },
  async (b) => {
    await using runtime = createTestRuntime({ maxProcesses: CAPACITY, seed: 1 });
    await runtime.runApp(async (app) => {
      await app.evalLang(async (lang) => {
        b.start();
        await lang.delay(0);
        b.end();
      });
    });
  },
);
