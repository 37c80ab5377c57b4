// Logging: LangL log calls go to a LogTape logger (never configured by the
// library) with processId/processName added; the runtime logs process
// lifecycle at debug level; the test runtime records every LangL log call.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import { configure, getConfig, getLogger, type LogRecord, reset } from "@logtape/logtape";
import { Runtime } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

/** Configures LogTape with one collecting sink per category; returns the records. */
async function collect(...categories: string[][]): Promise<LogRecord[][]> {
  const buckets = categories.map(() => [] as LogRecord[]);
  await configure({
    reset: true,
    sinks: Object.fromEntries(
      buckets.map((bucket, i) => [`s${i}`, (record: LogRecord) => void bucket.push(record)]),
    ),
    loggers: [
      ...categories.map((category, i) => ({
        category,
        sinks: [`s${i}`],
        lowestLevel: "debug" as const,
      })),
      // Silences LogTape's own "configured without a meta logger" notice.
      { category: ["logtape", "meta"], lowestLevel: null },
    ],
  });
  return buckets;
}

/** Records written by LangL calls (which carry `who`), leaving out lifecycle ones. */
function langRecords(records: LogRecord[]) {
  return records.filter((r) => "who" in r.properties).map((r) => ({
    category: r.category,
    level: r.level,
    rawMessage: r.rawMessage,
    properties: r.properties,
  }));
}

Deno.test("the library never configures LogTape", async () => {
  await reset();
  await using runtime = new Runtime({ maxProcesses: 1 });
  await runtime.runApp(async (app) => {
    const h = await app.forkProcess((lang) => lang.logError("nobody listens", { who: 1 }));
    await app.awaitResult(h);
  });
  assertStrictEquals(getConfig(), null);
});

Deno.test("LangL logs reach LogTape with processId and processName", async () => {
  const [records] = await collect(["procpool"]);
  try {
    await using runtime = new Runtime({ maxProcesses: 1 });
    await runtime.runApp(async (app) => {
      const h = await app.forkProcess((lang) => {
        lang.logDebug("d {who}", { who: "a" });
        lang.logInfo("i {who}", { who: "b" });
        lang.logWarning("w {who}", { who: "c" });
        lang.logError("e {who}", { who: "d" });
      }, { name: "worker" });
      await app.awaitResult(h);
      await app.evalLang((lang) => lang.logInfo("inline", { who: "e" }));
    });
    const category = ["procpool"];
    const named = { processId: 1, processName: "worker" };
    assertEquals(langRecords(records), [
      { category, level: "debug", rawMessage: "d {who}", properties: { who: "a", ...named } },
      { category, level: "info", rawMessage: "i {who}", properties: { who: "b", ...named } },
      { category, level: "warning", rawMessage: "w {who}", properties: { who: "c", ...named } },
      { category, level: "error", rawMessage: "e {who}", properties: { who: "d", ...named } },
      { category, level: "info", rawMessage: "inline", properties: { who: "e", processId: 0 } },
    ]);
    // The template was filled in from the properties.
    assertEquals(records.find((r) => r.rawMessage === "i {who}")?.message, ["i ", "b", ""]);
  } finally {
    await reset();
  }
});

Deno.test("the runtime logs forks and finishes at debug level under procpool", async () => {
  const [records] = await collect(["procpool"]);
  try {
    await using runtime = new Runtime({ maxProcesses: 2 });
    await runtime.runApp(async (app) => {
      const ok = await app.forkProcess(() => "fine", { name: "good" });
      const bad = await app.forkProcess(() => Promise.reject(new Error("boom")));
      await app.awaitResult(ok);
      await app.awaitResult(bad).catch(() => {});
    });
    const about = (id: number) =>
      records.filter((r) => r.level === "debug" && r.properties.processId === id);
    for (const id of [1, 2]) {
      const lifecycle = about(id);
      assert(lifecycle.length >= 2, `process ${id}: ${lifecycle.length} debug records`);
      assert(lifecycle.every((r) => r.category.join() === "procpool"));
      // The last record reports how the process ended.
      assertEquals(lifecycle.at(-1)!.properties.status, id === 1 ? "succeeded" : "failed");
      assert(!("status" in lifecycle[0].properties), "the first record is the fork");
    }
  } finally {
    await reset();
  }
});

Deno.test("a custom logger receives the records instead", async () => {
  const [own, defaults] = await collect(["my-app", "pool"], ["procpool"]);
  try {
    await using runtime = new Runtime({ maxProcesses: 1, logger: getLogger(["my-app", "pool"]) });
    await runtime.runApp((app) => app.evalLang((lang) => lang.logWarning("hi", { who: 1 })));
    assertEquals(langRecords(own), [{
      category: ["my-app", "pool"],
      level: "warning",
      rawMessage: "hi",
      properties: { who: 1, processId: 0 },
    }]);
    assertEquals(defaults, []);
  } finally {
    await reset();
  }
});

Deno.test("the test runtime records every LangL log call in order", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1, start: 100 });
  await runtime.runApp(async (app) => {
    await app.forkAll(["a", "b"], async (item, lang) => {
      await lang.delay(item === "a" ? 20 : 10);
      lang.logInfo("item {item}", { item });
      lang.logError("plain");
    }, { name: "job" });
    const h = await app.forkProcess((lang) => lang.logWarning("anonymous", { n: 1 }));
    await app.awaitResult(h);
    await app.evalLang((lang) => lang.logDebug("inline", { deep: { x: [1] } }));
  });
  assertEquals(runtime.logs, [
    {
      processId: 2,
      processName: "job[1]",
      level: "info",
      message: "item {item}",
      properties: { item: "b" },
      time: 110,
    },
    {
      processId: 2,
      processName: "job[1]",
      level: "error",
      message: "plain",
      properties: {},
      time: 110,
    },
    {
      processId: 1,
      processName: "job[0]",
      level: "info",
      message: "item {item}",
      properties: { item: "a" },
      time: 120,
    },
    {
      processId: 1,
      processName: "job[0]",
      level: "error",
      message: "plain",
      properties: {},
      time: 120,
    },
    { processId: 3, level: "warning", message: "anonymous", properties: { n: 1 }, time: 120 },
    {
      processId: 0,
      level: "debug",
      message: "inline",
      properties: { deep: { x: [1] } },
      time: 120,
    },
  ]);
});

Deno.test("log calls check their arguments", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await runtime.runApp((app) =>
    app.evalLang((lang) => {
      // @ts-expect-error: not a string
      assertThrows(() => lang.logInfo(42), TypeError, "message");
      // @ts-expect-error: not an object
      assertThrows(() => lang.logError("x", "props"), TypeError, "properties");
    })
  );
  assertEquals(runtime.logs, []);
});
