// Random streams: one per process, derived from (seed, process id), so the
// numbers do not depend on scheduling; plus argument checks of the random and
// delay operations.
import { assert, assertEquals, assertNotEquals, assertRejects, assertThrows } from "@std/assert";
import { type LangL, Runtime } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

type Draws = Record<number, number[]>;

function draw(lang: LangL): number[] {
  return [lang.random(), lang.getRandomInt(0, 1_000_000), lang.random()];
}

/**
 * Forks `count` processes that each wait `waitFor(i)` virtual ms (or real 0 ms
 * delays on a real runtime), then draw; returns the draws keyed by process id.
 */
async function drawsOf(
  runtime: Runtime,
  count: number,
  waitFor: (i: number) => number,
): Promise<Draws> {
  const draws: Draws = {};
  await runtime.runApp(async (app) => {
    for (let i = 0; i < count; i++) {
      await app.forkProcess(async (lang) => {
        await lang.delay(waitFor(i));
        draws[lang.processId] = draw(lang);
      });
    }
  });
  return draws;
}

Deno.test("with a seed, process N draws the same numbers whatever the schedule", async () => {
  const n = 12;
  const runs = [
    { maxProcesses: 12, waitFor: (i: number) => i * 10 }, // draws in id order
    { maxProcesses: 12, waitFor: (i: number) => (n - i) * 10 }, // reverse order
    { maxProcesses: 3, waitFor: (i: number) => (i * 7919) % 13 }, // shuffled, queued forks
    { maxProcesses: 1, waitFor: () => 0 }, // one at a time
  ];
  const results: Draws[] = [];
  for (const { maxProcesses, waitFor } of runs) {
    await using runtime = createTestRuntime({ maxProcesses, seed: 42 });
    results.push(await drawsOf(runtime, n, waitFor));
  }
  for (const result of results.slice(1)) assertEquals(result, results[0]);
  assertEquals(Object.keys(results[0]).length, n);

  // The same holds on a real runtime with the system clock.
  await using real = new Runtime({ maxProcesses: 4, seed: 42 });
  assertEquals(await drawsOf(real, n, () => 0), results[0]);
});

Deno.test("different processes get different streams", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 50, seed: 7 });
  const draws = await drawsOf(runtime, 50, () => 0);
  const firsts = new Set(Object.values(draws).map((d) => d[0]));
  assertEquals(firsts.size, 50);
});

Deno.test("different seeds give different numbers", async () => {
  const bySeed: Draws[] = [];
  for (const seed of [1, 2, 2 ** 40 + 1]) {
    await using runtime = createTestRuntime({ maxProcesses: 4, seed });
    bySeed.push(await drawsOf(runtime, 4, () => 0));
  }
  assertNotEquals(bySeed[0], bySeed[1]);
  assertNotEquals(bySeed[0], bySeed[2]);
  assertNotEquals(bySeed[1], bySeed[2]);
});

Deno.test("without a seed, runtimes differ, and their seed replays them", async () => {
  // Two 53-bit random seeds collide with probability 2^-53.
  await using one = createTestRuntime({ maxProcesses: 2 });
  await using two = createTestRuntime({ maxProcesses: 2 });
  assertNotEquals(one.seed, two.seed);
  const first = await drawsOf(one, 3, () => 0);
  assertNotEquals(first, await drawsOf(two, 3, () => 0));

  await using replay = createTestRuntime({ maxProcesses: 2, seed: one.seed });
  assertEquals(replay.seed, one.seed);
  assertEquals(await drawsOf(replay, 3, () => 0), first);
});

Deno.test("evalLang scripts share one stream per runtime", async () => {
  const seed = 99;
  await using split = createTestRuntime({ maxProcesses: 1, seed });
  const twoCalls = await split.runApp(async (app) => [
    ...await app.evalLang((lang) => draw(lang)),
    ...await app.evalLang((lang) => draw(lang)),
  ]);
  await using joined = createTestRuntime({ maxProcesses: 1, seed });
  const oneCall = await joined.runApp((app) =>
    app.evalLang((lang) => [...draw(lang), ...draw(lang)])
  );
  assertEquals(twoCalls, oneCall);
  // ...and it is not process 1's stream.
  await using forked = createTestRuntime({ maxProcesses: 1, seed });
  assertNotEquals((await drawsOf(forked, 1, () => 0))[1], oneCall.slice(0, 3));
});

Deno.test("getRandomInt's faces are about equally likely", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 123 });
  const counts = await runtime.runApp((app) =>
    app.evalLang((lang) => {
      const counts = [0, 0, 0, 0, 0, 0];
      for (let i = 0; i < 6000; i++) counts[lang.getRandomInt(1, 6) - 1]++;
      return counts;
    })
  );
  assert(counts.every((c) => c > 850 && c < 1150), `counts ${counts}`);
});

Deno.test("bad arguments", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  const inScript = (check: (lang: LangL) => unknown) =>
    runtime.runApp(async (app) => void await app.evalLang(check));

  await t.step("getRandomInt throws RangeError or TypeError, naming the argument", async () => {
    await inScript((lang) => {
      assertThrows(() => lang.getRandomInt(5, 1), RangeError, "5");
      assertThrows(() => lang.getRandomInt(1.5, 3), RangeError, "min");
      assertThrows(() => lang.getRandomInt(1, 2.5), RangeError, "max");
      assertThrows(() => lang.getRandomInt(NaN, 3), RangeError, "NaN");
      assertThrows(() => lang.getRandomInt(0, Infinity), RangeError, "Infinity");
      assertThrows(() => lang.getRandomInt(0, 2 ** 60), RangeError, "max");
      // @ts-expect-error: a string
      assertThrows(() => lang.getRandomInt("1", 3), TypeError, "min");
      // @ts-expect-error: missing
      assertThrows(() => lang.getRandomInt(1), TypeError, "max");
    });
  });

  await t.step("delay rejects (never throws) RangeError or TypeError", async () => {
    await inScript(async (lang) => {
      for (const ms of [-1, NaN, Infinity, -Infinity]) {
        let promise: Promise<void> | undefined;
        try {
          promise = lang.delay(ms);
        } catch (e) {
          throw new Error(`delay(${ms}) threw instead of rejecting: ${e}`);
        }
        await assertRejects(() => promise!, RangeError, "delay");
      }
      // @ts-expect-error: a string
      await assertRejects(() => lang.delay("10"), TypeError, "delay");
    });
    assertEquals(runtime.clock.pending, 0);
  });
});
