// A "thread" worker's lane: batches cross as JSON through a ring in shared
// memory when JSON carries them exactly, by postMessage otherwise, and arrive
// in the order they were sent either way.
import { assert, assertEquals, assertFalse } from "@std/assert";
import { Runtime } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";
import { serve } from "../src/worker/_serve.ts";
import { batchJson, MAX_JSON_DEPTH } from "../src/worker/_json_exact.ts";
import { LaneReceiver, LaneSender, type Sequenced } from "../src/worker/_lane.ts";
import { FrameRing } from "../src/worker/_ring.ts";
import type { Batch } from "../src/worker/protocol.ts";

const scripts = new URL("./workers/scripts.ts", import.meta.url);

function readAll(ring: FrameRing): string[] {
  const frames: string[] = [];
  ring.readAll((text) => frames.push(text));
  return frames;
}

Deno.test("FrameRing", async (t) => {
  await t.step("frames come out in order, across the end of the buffer many times", () => {
    const ring = FrameRing.create(1024);
    const sent: string[] = [];
    const got: string[] = [];
    for (let i = 0; i < 500; i++) {
      const text = `frame ${i} ${"é".repeat(i % 37)}`;
      assert(ring.tryWrite(text), `frame ${i} fits`);
      sent.push(text);
      if (i % 3 === 2) got.push(...readAll(ring));
    }
    got.push(...readAll(ring));
    assertEquals(got, sent);
  });

  await t.step("a frame of frameLimit fits once the reader caught up, wherever the ring is", () => {
    // Every write position a frame can start at (a frame of frameLimit once
    // failed at half the ring).
    for (let at = 0; at < 1024; at += 8) {
      const ring = FrameRing.create(1024);
      for (let moved = 0; moved < at; moved += 8) assert(ring.tryWrite("aaaa"));
      readAll(ring);
      assert(!ring.pending);
      assert(ring.tryWrite("b".repeat(ring.frameLimit)), `frameLimit at ${at}`);
    }
  });

  await t.step("a full ring refuses a frame (nothing written) until the reader reads", () => {
    const ring = FrameRing.create(64);
    assert(ring.tryWrite("x".repeat(20)));
    assert(ring.tryWrite("y".repeat(20)));
    assertFalse(ring.tryWrite("z".repeat(20)), "no room");
    assertEquals(readAll(ring), ["x".repeat(20), "y".repeat(20)]);
    assert(ring.tryWrite("z".repeat(20)));
    assertEquals(readAll(ring), ["z".repeat(20)]);
    assertFalse(ring.pending);
  });

  await t.step("a frame larger than half the ring is refused", () => {
    const ring = FrameRing.create(64);
    assertFalse(ring.tryWrite("x".repeat(40)));
    assertFalse(ring.pending);
  });

  await t.step("listen calls back after each ring, and stops", async () => {
    const ring = FrameRing.create(64);
    // Atomics.waitAsync does not keep Deno's event loop alive (a worker does, in use).
    const alive = setInterval(() => {}, 1_000);
    const got: string[] = [];
    let wake: () => void = () => {};
    const stop = ring.listen(() => {
      got.push(...readAll(ring));
      wake();
    });
    const next = () => new Promise<void>((resolve) => wake = resolve);
    let arrived = next();
    ring.tryWrite("one");
    await arrived;
    arrived = next();
    ring.tryWrite("two");
    await arrived;
    stop();
    clearInterval(alive);
    assertEquals(got, ["one", "two"]);
  });
});

Deno.test("LaneSender and LaneReceiver keep the order across the ring and messages", () => {
  const ring = FrameRing.create(1024);
  const posted: Sequenced<unknown>[] = [];
  const sender = new LaneSender<unknown>(ring, (batch) => posted.push(structuredClone(batch)));
  const delivered: unknown[] = [];
  const receiver = new LaneReceiver<unknown>((batch: Batch<unknown>) => delivered.push(...batch.m));
  const values = [1, -0, "two", NaN, { three: 3 }, [4, undefined], "x".repeat(600), 5, new Map()];
  for (const value of values) sender.send({ now: 0, m: [{ t: "v", v: value }] });
  assertEquals(posted.length, 5, "-0, NaN, undefined in an array, the long one and the Map");
  // The messages arrive first, then the ring is read: the receiver waits for the gaps.
  for (const batch of posted) receiver.receive(batch);
  assertEquals(delivered, []);
  receiver.drain(ring);
  assertEquals(delivered.map((m) => (m as { v: unknown }).v), values);
});

Deno.test("LaneSender sends nothing and throws when a value cannot be cloned", () => {
  const ring = FrameRing.create(128);
  const sender = new LaneSender<unknown>(ring, (batch) => structuredClone(batch));
  let threw = false;
  try {
    sender.send({ now: 0, m: [{ t: "v", v: () => 1 }] });
  } catch {
    threw = true;
  }
  assert(threw);
  sender.send({ now: 0, m: [{ t: "v", v: 2 }] });
  const got: Sequenced<unknown>[] = [];
  ring.readAll((text) => got.push(JSON.parse(text)));
  assertEquals(got.map((batch) => batch.s), [0], "the refused batch took no place in the order");
});

Deno.test("LaneSender reads a getter once, as structured clone does", () => {
  const ring = FrameRing.create(1024);
  const posted: Sequenced<unknown>[] = [];
  const sender = new LaneSender<unknown>(ring, (batch) => posted.push(structuredClone(batch)));
  let reads = 0;
  const value = {
    get n() {
      return ++reads;
    },
  };
  sender.send({ now: 0, m: [{ t: "v", v: value }] });
  assertEquals(reads, 1);
  const receiver = new LaneReceiver<unknown>(() => {});
  receiver.drain(ring);
  assertEquals(posted.map((batch) => batch.m), [[{ t: "v", v: { n: 1 } }]]);
});

Deno.test("LaneSender gives a batch too large for the ring up", () => {
  const ring = FrameRing.create(64 * 1024);
  const posted: Sequenced<unknown>[] = [];
  const sender = new LaneSender<unknown>(ring, (batch) => posted.push(batch));
  // 10 000 elements of 11 characters of JSON each: the walk stops once the
  // text is past the ring's limit. (It used to be shown by counting the reads
  // of getters; a getter now sends its array by structured clone unread.)
  let reads = 0;
  const counted: string[] = [];
  for (let i = 0; i < 10_000; i++) {
    Object.defineProperty(counted, i, { get: () => (reads++, "12345678"), enumerable: true });
  }
  sender.send({ now: 0, m: [{ t: "v", v: counted }] });
  sender.send({ now: 0, m: [{ t: "v", v: new Array(10_000).fill("12345678") }] });
  assertEquals(posted.length, 2);
  assertFalse(ring.pending);
  assertEquals(reads, 0, "getters are left to structured clone");
  // A larger array is given up unread.
  sender.send({ now: 0, m: [{ t: "v", v: new Array(100_000).fill(1) }] });
  assertEquals(posted.length, 3);
});

/** Whether JSON carries these messages exactly (see batchJson). */
const jsonExact = (messages: readonly unknown[]): boolean =>
  batchJson({ now: 0, m: messages }) !== undefined;

Deno.test("jsonExact: only what JSON gives back as structured clone would", () => {
  const shared = { a: 1 };
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const exact = [
    1,
    "s",
    true,
    null,
    [1, "a", [null]],
    { a: { b: [1, 2] } },
  ];
  for (const v of exact) assert(jsonExact([{ t: "x", v }]), Deno.inspect(v));
  assert(jsonExact([{ t: "x", v: undefined }]), "a message's own property may be undefined");
  const inexact = [
    -0,
    NaN,
    Infinity,
    10n,
    [undefined],
    [1, , 3],
    { a: undefined },
    { a: new Date(0) },
    new Map(),
    new Set(),
    new Uint8Array(2),
    Object.assign([1], { extra: true }),
    Object.create({ inherited: 1 }),
    new Proxy({ a: 1 }, {}),
    [shared, shared],
    cycle,
    (function (..._: unknown[]) {
      return arguments;
    })(1),
    {
      get a() {
        return 1;
      },
    },
    () => 1,
    Symbol("s"),
  ];
  for (const v of inexact) assertFalse(jsonExact([{ t: "x", v }]), Deno.inspect(v));
  let deep: unknown = 1;
  for (let i = 0; i < MAX_JSON_DEPTH; i++) deep = [deep];
  assert(jsonExact([{ t: "x", v: deep }]), "as deep as the limit");
  assertFalse(jsonExact([{ t: "x", v: [deep] }]), "deeper than the limit");
  assert(jsonExact([{ t: "x", v: shared }, { t: "y" }]));
  assertFalse(jsonExact([{ t: "x", v: shared }, { t: "y", v: shared }]), "shared across messages");
});

Deno.test("forkWorker (thread): a timer a finished script left behind still fires", async () => {
  await using runtime = new Runtime({ maxProcesses: 1, workers: 1 });
  await runtime.runApp(async (app) => {
    await app.awaitResult(await app.forkWorker(scripts, 0, { export: "leaveTimer" }));
    // The worker may wait blocked for its next run for a few ms, not longer.
    let fired = 0;
    for (let i = 0; i < 50 && fired === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      fired = await app.awaitResult(
        await app.forkWorker<number, number>(scripts, 0, { export: "leftTimers" }),
      );
    }
    assertEquals(fired, 1);
  });
});

Deno.test("forkWorker (thread): back-to-back runs still let timers and promise callbacks run", async () => {
  await using runtime = new Runtime({ maxProcesses: 1, workers: 1 });
  await runtime.runApp(async (app) => {
    const run = async () =>
      app.awaitResult(
        await app.forkWorker<number, [number, number]>(scripts, 0, { export: "timersAndTicks" }),
      );
    // No pause between runs: the worker keeps serving its ring, blocked between runs.
    for (let i = 0; i < 500; i++) await run();
    const [timers, ticks] = await run();
    for (let i = 0; i < 1000; i++) await run();
    const [timersAfter, ticksAfter] = await run();
    assertEquals(ticksAfter - ticks, 1001, "each run's promise callback ran before the next run");
    assert(timersAfter > timers, `timers fired during 1000 back-to-back runs (${timers} before)`);
  });
  // The last run's timer and the worker's own leftovers end with the runtime.
});

Deno.test("serve does not wait blocked while a batch sent as a message has not come", async () => {
  const ring = FrameRing.create(64);
  let blocked = 0;
  const waitSync = ring.waitSync.bind(ring);
  ring.waitSync = (seen, ms) => (blocked++, waitSync(seen, ms));
  const served = { drain() {}, flush() {}, waiting: true, received: 0 };
  // The runtime posted a batch and rang: it waits in this thread's event loop.
  ring.postedOne();
  await serve(ring, served, 50);
  assertEquals(blocked, 0);
  // Once it came, serve waits for frames again.
  served.received = 1;
  await serve(ring, served, 1);
  assertEquals(blocked, 1);
});

Deno.test("forkWorker: what a synchronous script queued before it returned belongs to its run", async () => {
  for (const isolation of ["thread", "process"] as const) {
    await using runtime = createTestRuntime({ maxProcesses: 1, workers: 1 });
    await runtime.runApp(async (app) =>
      app.awaitResult(await app.forkWorker(scripts, "late", { export: "lateLog", isolation }))
    );
    assertEquals(runtime.logs.map((entry) => entry.message), ["late"], isolation);
  }
});
