// The backoff wait policy's schedule (the book's retry loop): growing sleeps
// on the runtime clock, capped, and jittered from the seeded random source.
import { assert, assertEquals } from "@std/assert";
import { backoff, type Clock, Runtime } from "../mod.ts";
import { VirtualClock } from "../testing.ts";

/** A clock that records every sleep it is asked for, on top of a VirtualClock. */
function recordingClock(virtual: VirtualClock): Clock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => virtual.now(),
    sleep: (ms, signal) => {
      sleeps.push(ms);
      return virtual.sleep(ms, signal);
    },
  };
}

Deno.test("backoff retries with growing sleeps on the runtime clock, capped by maxMs", async () => {
  const virtual = new VirtualClock();
  const clock = recordingClock(virtual);
  const wait = backoff({ initialMs: 10, factor: 2, maxMs: 50, jitter: 0 });
  await using runtime = new Runtime({ maxProcesses: 1, clock, wait });
  const gate = Promise.withResolvers<void>();
  await runtime.runApp(async (app) => {
    const holder = await app.forkProcess(() => gate.promise);
    let startedAt = -1;
    const waiting = app.forkProcess((lang) => {
      startedAt = lang.now();
    });
    waiting.catch(() => {}); // keeps a failed assertion's report readable
    assertEquals(clock.sleeps, [10]);
    assertEquals(runtime.stats().waiting, 1);
    await virtual.advance(10 + 20 + 40 + 50);
    assertEquals(clock.sleeps, [10, 20, 40, 50, 50]);
    gate.resolve();
    await app.awaitResult(holder);
    assertEquals(startedAt, -1, "a backoff waiter only notices a free slot when it wakes");
    await virtual.advance(50);
    await app.awaitResult(await waiting);
    assertEquals(startedAt, 170);
    assertEquals(runtime.stats().waiting, 0);
  });
});

Deno.test("backoff jitter comes from the seeded random source", async () => {
  const sleepsFor = async (seed: number) => {
    const virtual = new VirtualClock();
    const clock = recordingClock(virtual);
    const wait = backoff({ initialMs: 100, factor: 1, maxMs: 100, jitter: 0.5 });
    await using runtime = new Runtime({ maxProcesses: 1, clock, wait, seed });
    const gate = Promise.withResolvers<void>();
    await runtime.runApp(async (app) => {
      const holder = await app.forkProcess(() => gate.promise);
      const waiting = app.forkProcess(() => {});
      waiting.catch(() => {});
      while (clock.sleeps.length < 20) await virtual.advance(200);
      gate.resolve();
      await app.awaitResult(holder);
      await virtual.advance(200);
      await app.awaitResult(await waiting);
    });
    return clock.sleeps.slice(0, 20);
  };
  const sleeps = await sleepsFor(5);
  assert(sleeps.every((ms) => ms >= 50 && ms <= 150), `out of ±50 %: ${sleeps}`);
  assert(new Set(sleeps).size > 1, "jitter 0.5 should spread the sleeps");
  assertEquals(await sleepsFor(5), sleeps);
});
