// The metrics, in process: a minimal MeterProvider registered through
// @opentelemetry/api (no tracer provider), so the runtime runs with metrics
// and without spans. Registered for this file only and removed at the end.
import { assert, assertEquals } from "@std/assert";
import { type Attributes, type MeterProvider, metrics } from "@opentelemetry/api";
import { createTestRuntime } from "../testing.ts";
import { Runtime } from "../mod.ts";

interface Point {
  readonly name: string;
  readonly value: number;
  readonly attributes: Attributes;
}

/** Records every add/record, and calls the gauges' callbacks on collect(). */
function fakeMeterProvider() {
  const points: Point[] = [];
  const callbacks: { name: string; callback: (result: unknown) => void }[] = [];
  const instrument = (name: string) => ({
    add: (value: number, attributes: Attributes = {}) => points.push({ name, value, attributes }),
    record: (value: number, attributes: Attributes = {}) =>
      points.push({ name, value, attributes }),
  });
  const meter = {
    createCounter: instrument,
    createHistogram: instrument,
    createObservableGauge: (name: string) => ({
      addCallback: (callback: (result: unknown) => void) => callbacks.push({ name, callback }),
    }),
  };
  const provider = { getMeter: () => meter } as unknown as MeterProvider;
  const collect = () => {
    const observed: Point[] = [];
    for (const { name, callback } of callbacks) {
      callback({
        observe: (value: number, attributes: Attributes = {}) =>
          observed.push({ name, value, attributes }),
      });
    }
    return observed;
  };
  return { provider, points, collect };
}

Deno.test("procpool.* metrics through a registered MeterProvider", async (t) => {
  const fake = fakeMeterProvider();
  assert(metrics.setGlobalMeterProvider(fake.provider));
  try {
    await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
    const gauges: Point[][] = [];
    await runtime.runApp(async (app) => {
      const handles = [];
      for (let i = 0; i < 3; i++) {
        handles.push(await app.forkProcess((lang) => lang.delay(1_000 * (i + 1)), { name: "w" }));
      }
      gauges.push(fake.collect()); // 2 active, none waiting: the third waited 1 s and now runs
      const forking = app.forkProcess(() => {
        throw new Error("no");
      });
      gauges.push(fake.collect()); // 2 active, 1 waiting
      const doomed = await forking; // waited 1 s, until the second stopped
      handles[2].cancel();
      for (const handle of [...handles, doomed]) await app.awaitResult(handle).catch(() => {});
    });

    const runtimeId = fake.points[0].attributes["procpool.runtime"];
    const sum = (name: string) =>
      fake.points.filter((p) => p.name === name).reduce((total, p) => total + p.value, 0);

    await t.step("counters match stats()", () => {
      const stats = runtime.stats();
      assertEquals(sum("procpool.started"), stats.started);
      assertEquals(sum("procpool.succeeded"), stats.succeeded);
      assertEquals(sum("procpool.failed"), stats.failed);
      assertEquals(sum("procpool.cancelled"), stats.cancelled);
      assertEquals([stats.started, stats.succeeded, stats.failed, stats.cancelled], [4, 2, 1, 1]);
    });

    await t.step("histograms in seconds on the runtime's (virtual) clock", () => {
      const waits = fake.points.filter((p) => p.name === "procpool.wait.duration");
      assertEquals(waits.map((p) => p.value), [0, 0, 1, 1]);
      const runs = fake.points.filter((p) => p.name === "procpool.run.duration");
      assertEquals(runs.length, 4);
      const first = runs.find((p) => p.attributes["procpool.process.outcome"] === "succeeded");
      assertEquals(first?.value, 1);
    });

    await t.step("gauges: active, waiting and max of this runtime", () => {
      const mine = (points: Point[], name: string) =>
        points.find((p) => p.name === name && p.attributes["procpool.runtime"] === runtimeId)
          ?.value;
      assertEquals(mine(gauges[0], "procpool.active"), 2);
      assertEquals(mine(gauges[0], "procpool.waiting"), 0);
      assertEquals(mine(gauges[0], "procpool.max"), 2);
      assertEquals(mine(gauges[1], "procpool.waiting"), 1);
      assertEquals(mine(fake.collect(), "procpool.active"), 0);
    });

    await t.step("attribute sets are small: the runtime, and the outcome on run time", () => {
      for (const point of fake.points) {
        const keys = Object.keys(point.attributes).sort();
        const expected = point.name === "procpool.run.duration"
          ? ["procpool.process.outcome", "procpool.runtime"]
          : ["procpool.runtime"];
        assertEquals(keys, expected, point.name);
      }
    });

    await t.step("a second runtime is its own attribute set", async () => {
      await using other = new Runtime({ maxProcesses: 5 });
      const maxes = fake.collect().filter((p) => p.name === "procpool.max").map((p) => p.value);
      assert(maxes.includes(2) && maxes.includes(5), JSON.stringify(maxes));
      await other.runApp((app) => app.forkAll([1], (n) => n));
    });
  } finally {
    metrics.disable();
  }
});

Deno.test("without a provider no metric is recorded", async () => {
  const fake = fakeMeterProvider();
  await using runtime = new Runtime({ maxProcesses: 1 });
  await runtime.runApp((app) => app.forkAll([1, 2], (n) => n));
  // Registered only after the runtime was built: it is not seen, by design.
  assert(metrics.setGlobalMeterProvider(fake.provider));
  try {
    await runtime.runApp((app) => app.forkAll([1, 2], (n) => n));
    assertEquals(fake.points, []);
  } finally {
    metrics.disable();
  }
});
