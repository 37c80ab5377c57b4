// VirtualClock on its own, advanced by hand.
import { assertEquals, assertRejects, assertStrictEquals, assertThrows } from "@std/assert";
import { Runtime } from "../mod.ts";
import { VirtualClock } from "../testing.ts";

Deno.test("now starts at 0 or at the given start", () => {
  assertEquals(new VirtualClock().now(), 0);
  assertEquals(new VirtualClock(1_700_000_000_000).now(), 1_700_000_000_000);
});

Deno.test("sleep, advance and pending", async () => {
  const clock = new VirtualClock(100);
  let woke = -1;
  const sleeping = clock.sleep(50).then(() => woke = clock.now());
  assertEquals(clock.pending, 1);
  await clock.advance(49);
  assertEquals([clock.now(), woke, clock.pending], [149, -1, 1]);
  await clock.advance(1);
  await sleeping;
  assertEquals([clock.now(), woke, clock.pending], [150, 150, 0]);
  // advance moves time even with no sleeper.
  await clock.advance(1000);
  assertEquals(clock.now(), 1150);
});

Deno.test("sleepers fire in time order, and in sleep order at the same deadline", async () => {
  const clock = new VirtualClock();
  const fired: string[] = [];
  const sleep = (name: string, ms: number) =>
    clock.sleep(ms).then(() => fired.push(`${name}@${clock.now()}`));
  sleep("a", 10);
  sleep("b", 5);
  sleep("c", 10);
  sleep("d", 5);
  sleep("e", 0);
  sleep("f", 30);
  await clock.advance(20);
  assertEquals(fired, ["e@0", "b@5", "d@5", "a@10", "c@10"]);
  assertEquals([clock.now(), clock.pending], [20, 1]);
  await clock.advance(10);
  assertEquals(fired.at(-1), "f@30");
});

Deno.test("sleep(0) fires on advance(0)", async () => {
  const clock = new VirtualClock();
  let fired = false;
  clock.sleep(0).then(() => fired = true);
  await clock.advance(0);
  assertEquals([fired, clock.pending, clock.now()], [true, 0, 0]);
});

Deno.test("aborting removes a sleeper", async (t) => {
  await t.step("pending drops and the sleep rejects with the reason", async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    const reason = new Error("changed my mind");
    let otherFired = false;
    const sleeping = clock.sleep(10, controller.signal);
    clock.sleep(10).then(() => otherFired = true);
    assertEquals(clock.pending, 2);
    controller.abort(reason);
    assertEquals(clock.pending, 1);
    const error = await assertRejects(() => sleeping);
    assertStrictEquals(error, reason);
    await clock.advance(10);
    assertEquals([otherFired, clock.pending], [true, 0]);
  });

  await t.step("an aborted signal rejects at once and registers nothing", async () => {
    const clock = new VirtualClock();
    const error = await assertRejects(() => clock.sleep(10, AbortSignal.abort("early")));
    assertEquals(error, "early");
    assertEquals(clock.pending, 0);
  });

  await t.step("aborting after the sleeper fired changes nothing", async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(5, controller.signal);
    await clock.advance(5);
    controller.abort();
    await sleeping; // resolved, not rejected
    assertEquals(clock.pending, 0);
  });

  await t.step("an aborted earliest sleeper does not move time", async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    clock.sleep(5, controller.signal).catch(() => {});
    let woke = -1;
    clock.sleep(50).then(() => woke = clock.now());
    controller.abort();
    await clock.advance(20);
    assertEquals([clock.now(), woke, clock.pending], [20, -1, 1]);
    await clock.advance(30);
    assertEquals(woke, 50);
  });
});

Deno.test("advance runs sleepers scheduled by woken code within the window", async () => {
  const clock = new VirtualClock();
  const fired: number[] = [];
  const chain = async () => {
    await clock.sleep(10);
    fired.push(clock.now());
    // Several microtask hops before the next sleep.
    await Promise.resolve();
    await null;
    await clock.sleep(5);
    fired.push(clock.now());
    await clock.sleep(0);
    fired.push(clock.now());
    await clock.sleep(100); // beyond the window
    fired.push(clock.now());
  };
  const done = chain();
  await clock.advance(20);
  assertEquals(fired, [10, 15, 15]);
  assertEquals([clock.now(), clock.pending], [20, 1]);
  await clock.advance(95);
  await done;
  assertEquals(fired, [10, 15, 15, 115]);
});

Deno.test("a runtime can run on a hand-advanced virtual clock", async () => {
  const clock = new VirtualClock();
  await using runtime = new Runtime({ maxProcesses: 2, clock, seed: 1 });
  const result = runtime.runApp((app) =>
    app.forkAll([30, 10], async (ms, lang) => {
      await lang.delay(ms);
      return lang.now();
    })
  );
  for (let i = 0; i < 100 && clock.pending < 2; i++) await Promise.resolve();
  assertEquals(clock.pending, 2);
  await clock.advance(30);
  assertEquals(await result, [30, 10]);
});

Deno.test("bad input", async (t) => {
  await t.step("the constructor throws", () => {
    // @ts-expect-error: a string
    assertThrows(() => new VirtualClock("0"), TypeError, "start");
    assertThrows(() => new VirtualClock(NaN), RangeError, "start");
    assertThrows(() => new VirtualClock(Infinity), RangeError, "start");
  });

  await t.step("sleep and advance reject", async () => {
    const clock = new VirtualClock();
    for (const ms of [-1, NaN, Infinity]) {
      await assertRejects(() => clock.sleep(ms), RangeError, "ms");
      await assertRejects(() => clock.advance(ms), RangeError, "ms");
    }
    // @ts-expect-error: a string
    await assertRejects(() => clock.sleep("1"), TypeError, "ms");
    // @ts-expect-error: a string
    await assertRejects(() => clock.advance("1"), TypeError, "ms");
    assertEquals([clock.now(), clock.pending], [0, 0]);
  });
});

Deno.test("the virtual clock stays within Number.MAX_SAFE_INTEGER", async (t) => {
  await t.step(
    "a sleep that would end past the range never fires, and can be aborted",
    async () => {
      const clock = new VirtualClock(Number.MAX_SAFE_INTEGER - 10);
      const controller = new AbortController();
      let fired = false;
      const far = clock.sleep(1e308, controller.signal).then(() => fired = true);
      const near = clock.sleep(5);
      assertEquals(clock.pending, 2);
      await clock.advance(10);
      await near;
      assertEquals([fired, clock.pending, clock.now()], [false, 1, Number.MAX_SAFE_INTEGER]);
      controller.abort(new Error("gave up"));
      await assertRejects(() => far, Error, "gave up");
      assertEquals(clock.pending, 0);
    },
  );

  await t.step("advancing past the range is a RangeError and leaves the time", async () => {
    const clock = new VirtualClock();
    await clock.advance(2 ** 52);
    await assertRejects(() => clock.advance(2 ** 52), RangeError, "MAX_SAFE_INTEGER");
    assertEquals(clock.now(), 2 ** 52);
    await clock.advance(2 ** 52 - 1);
    assertEquals(clock.now(), Number.MAX_SAFE_INTEGER);
  });
});
