// S4 at the Runtime level: a runtime that has taken the whole limit while
// alone gives a newcomer its share promptly, through the "wanted" notice,
// long before its next renewal would tell it (leaseMs 10 s: renewals every
// ~3.3 s), and the two then share equally while the bound holds.
import { assert } from "@std/assert";
import { type LangL, Runtime } from "../mod.ts";
import { redisCapacity } from "../redis.ts";
import { heldWithin, type Interval, maxConcurrent, wallMs } from "./_fleet_harness.ts";
import { redisFixture, sleep, until, within } from "./_redis_fixture.ts";

const LIMIT = 8;
/** Far below the first renewal (leaseMs / 3 = 3.3 s): only the notice can explain it. */
const SHARE_WITHIN_MS = 1_000;
/** How long the two then run side by side. */
const TOGETHER_MS = 1_500;
const REPORT = Deno.env.get("FLEET_REPORT") !== undefined;

/** A runtime that keeps LIMIT forks going, each process holding 2–5 ms, until `stop`. */
class Busy {
  readonly intervals: Interval[] = [];
  running = 0;
  /** Wall-clock ms when `running` first reached `LIMIT / 2`. */
  halfAt = Infinity;
  stop = false;
  readonly done: Promise<unknown>;

  constructor(readonly runtime: Runtime) {
    this.done = runtime.runApp(async (app) => {
      const lane = async () => {
        while (!this.stop) await app.awaitResult(await app.forkProcess(this.#process));
      };
      await Promise.all(Array.from({ length: LIMIT }, lane));
    });
  }

  readonly #process = async (lang: LangL) => {
    const start = wallMs() * 1000;
    if (++this.running >= LIMIT / 2 && this.halfAt === Infinity) this.halfAt = start / 1000;
    try {
      await lang.delay(lang.getRandomInt(2, 5));
    } finally {
      this.running--;
      this.intervals.push([start, wallMs() * 1000]);
    }
  };
}

Deno.test("shared capacity: a newcomer gets its share at once, then equal shares", async () => {
  await using fx = await redisFixture();
  const shared = redisCapacity({ redis: fx.redis, key: "fair", limit: LIMIT, leaseMs: 10_000 });
  await using first = new Runtime({ maxProcesses: LIMIT, shared });
  await using second = new Runtime({ maxProcesses: LIMIT, shared });
  const a = new Busy(first);
  let b: Busy | undefined;
  try {
    await until(() => first.stats().shared?.held === LIMIT, 15_000, "the first takes the limit");
    await sleep(200);
    const joinedAt = wallMs();
    b = new Busy(second);
    const newcomer = b;
    await until(() => newcomer.halfAt < Infinity, 15_000, "the newcomer's share");
    const tookMs = newcomer.halfAt - joinedAt;
    await sleep(TOGETHER_MS);
    const to = wallMs() * 1000;
    a.stop = b.stop = true;
    await within(Promise.all([a.done, b.done]), 15_000, "both apps");
    const all = [...a.intervals, ...b.intervals];
    assert(maxConcurrent(all) <= LIMIT, `at most ${LIMIT} at once, saw ${maxConcurrent(all)}`);
    const from = newcomer.halfAt * 1000;
    const heldA = heldWithin(a.intervals, from, to), heldB = heldWithin(b.intervals, from, to);
    const shareB = heldB / (heldA + heldB);
    if (REPORT) {
      console.log({ tookMs, shareB, utilisation: (heldA + heldB) / (LIMIT * (to - from)) });
    }
    assert(tookMs <= SHARE_WITHIN_MS, `the newcomer had half the limit only after ${tookMs} ms`);
    assert(Math.abs(shareB - 0.5) <= 0.1, `the newcomer's share ${shareB}`);
  } finally {
    a.stop = true;
    if (b) b.stop = true;
    await Promise.allSettled([a.done, b?.done]);
  }
});
