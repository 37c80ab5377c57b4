// The runtime asks its logger once per process whether debug records are
// taken, and keeps LogTape's answer until LogTape is configured again. These
// tests pin that the kept answer never goes stale: a configure() or reset()
// in the middle of a runtime's life takes effect for the next process, a
// configuration with context-local storage is asked every time, and a logger
// that is not LogTape's is asked every time.
import { AsyncLocalStorage } from "node:async_hooks";
import { assertEquals } from "@std/assert";
import { configure, getLogger, type LogRecord, reset, withCategoryPrefix } from "@logtape/logtape";
import * as secondCopy from "@logtape/logtape-second-copy";
import { Runtime, type RuntimeLogger } from "../mod.ts";
import type { AppL } from "../mod.ts";

const META = { category: ["logtape", "meta"], lowestLevel: null };

/** Debug records under ["procpool"] go to the returned array. */
async function collectDebug(
  contextLocalStorage?: AsyncLocalStorage<Record<string, unknown>>,
): Promise<LogRecord[]> {
  const records: LogRecord[] = [];
  await configure({
    reset: true,
    contextLocalStorage,
    sinks: { collect: (record: LogRecord) => void records.push(record) },
    loggers: [{ category: ["procpool"], sinks: ["collect"], lowestLevel: "debug" }, META],
  });
  return records;
}

const forked = (records: LogRecord[]) =>
  records.filter((r) => r.rawMessage === "forked process {processId}").map((r) =>
    r.properties.processId
  );

async function forkOne(app: AppL): Promise<void> {
  await app.awaitResult(await app.forkProcess(() => 1));
}

Deno.test("the debug check follows LogTape's configuration", async (t) => {
  try {
    await t.step("configured in the middle of a runtime's life", async () => {
      await reset();
      await using runtime = new Runtime({ maxProcesses: 1 });
      let records: LogRecord[] = [];
      await runtime.runApp(async (app) => {
        await forkOne(app); // process 1: nobody listens
        records = await collectDebug();
        await forkOne(app); // process 2: logged
        await reset();
        await forkOne(app); // process 3: nobody listens again
        const again = await collectDebug();
        await forkOne(app); // process 4
        assertEquals(forked(again), [4]);
      });
      assertEquals(forked(records), [2]);
    });

    await t.step("with context-local storage, a category prefix is seen per process", async () => {
      const storage = new AsyncLocalStorage<Record<string, unknown>>();
      const records: LogRecord[] = [];
      await configure({
        reset: true,
        contextLocalStorage: storage,
        sinks: { collect: (record: LogRecord) => void records.push(record) },
        // Only the prefixed category takes debug records.
        loggers: [
          { category: ["tenant", "procpool"], sinks: ["collect"], lowestLevel: "debug" },
          META,
        ],
      });
      await using runtime = new Runtime({ maxProcesses: 1 });
      await runtime.runApp(async (app) => {
        await forkOne(app); // process 1: ["procpool"] is not configured
        await withCategoryPrefix(["tenant"], () => forkOne(app)); // process 2: ["tenant", "procpool"]
        await forkOne(app); // process 3
      });
      assertEquals(forked(records), [2]);
    });
  } finally {
    await reset();
  }
});

Deno.test("a logger that is not LogTape's is asked for every process", async () => {
  let debug = false;
  const messages: string[] = [];
  const logger: RuntimeLogger = {
    isEnabledFor: () => debug,
    debug: (message: string) => void messages.push(message),
    info: () => {},
    warn: () => {},
    error: () => {},
  } as unknown as RuntimeLogger;
  await using runtime = new Runtime({ maxProcesses: 1, logger });
  await runtime.runApp(async (app) => {
    await forkOne(app);
    debug = true;
    await forkOne(app);
    debug = false;
    await forkOne(app);
  });
  assertEquals(messages.filter((m) => m.startsWith("forked")), ["forked process {processId}"]);
});

Deno.test("a LogTape logger made with with() follows configure() mid-run and keeps its properties", async () => {
  try {
    await reset();
    const logger = getLogger(["procpool"]).with({ tenant: "a" });
    await using runtime = new Runtime({ maxProcesses: 1, logger });
    let records: LogRecord[] = [];
    await runtime.runApp(async (app) => {
      await forkOne(app);
      records = await collectDebug();
      await forkOne(app);
    });
    assertEquals(forked(records), [2]);
    assertEquals(
      records.find((r) => r.rawMessage === "forked process {processId}")?.properties.tenant,
      "a",
    );
  } finally {
    await reset();
  }
});

Deno.test("a configuration made through another copy of LogTape is seen from the next runApp", async () => {
  // What an application importing LogTape from JSR next to procpool's npm
  // copy does (review: a runtime made before that configure kept "no debug"
  // for good, since procpool's own getConfig() never changes).
  await using runtime = new Runtime({ maxProcesses: 2 });
  const records: LogRecord[] = [];
  await secondCopy.configure({
    sinks: { collect: (record) => void records.push(record as LogRecord) },
    loggers: [{ category: ["procpool"], sinks: ["collect"], lowestLevel: "debug" }, META],
  });
  try {
    await runtime.runApp(forkOne);
    assertEquals(forked(records).length, 1);
  } finally {
    await secondCopy.reset();
  }
});

Deno.test("another copy's contextLocalStorage: a category prefix is seen for every process", async () => {
  // Review: with the configuration made through another copy, procpool's own
  // getConfig() is null, and the answer was kept although that copy's
  // context-local storage (on the shared root logger) makes it depend on the
  // async context.
  const storage = new AsyncLocalStorage<Record<string, unknown>>();
  const records: LogRecord[] = [];
  await secondCopy.configure({
    contextLocalStorage: storage,
    sinks: { collect: (record) => void records.push(record as LogRecord) },
    loggers: [{ category: ["tenant", "procpool"], sinks: ["collect"], lowestLevel: "debug" }, META],
  });
  try {
    await using runtime = new Runtime({ maxProcesses: 1 });
    await runtime.runApp(async (app) => {
      await forkOne(app);
      await secondCopy.withCategoryPrefix(["tenant"], () => forkOne(app));
      await forkOne(app);
    });
    assertEquals(forked(records), [2]);
  } finally {
    await secondCopy.reset();
  }
});
