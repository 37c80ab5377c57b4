// A model-based property test of the lease script against a private real
// redis-server: random sequences of acquire (batched), renew, release (with
// hand-over to waiting holders), wait, withdraw and leave, limit mismatches,
// and expiry, by four holders on one key with a small limit. Each reply is
// checked against a model of the store (_store_model.ts), and after every
// call the key itself is read from Redis: at most `limit` leases, the held
// counts match them and sum to their number, each holder's leases are the
// model's, fences strictly increase, lapsed leases and wait records are
// reclaimed by the next call, the wait records are the model's, and every
// key expires, never before a deadline in it, while meta's 'due' (before
// which the script looks for nothing lapsed) is never after one
// (_store_probe.ts). A key of the store lost on its own (leases, waiters,
// holders set, state hash: what an eviction or a stray DEL does) is repaired
// by the next call, the key's limit included (S7). Every reply's view number (seq) is above the last, and
// at the end of each run every holder has heard exactly the notices the model
// says, in order (_store_notices.ts).
//
// Expiry: mostly by moving deadlines into the past in Redis (what time would
// do, at once and deterministically); a few times in all for real, through a
// renewal with 20 ms leases and a 40 ms sleep (realLapses: 5 by default, so
// about 200 ms of sleeping). PROCPOOL_RUNS raises the number of runs (default
// 40, each up to 40 commands: about 700 store calls, each followed by a read
// of the whole key) and the real lapses with them (one per 8 runs);
// `deno task test:store` runs 3 000.
import fc from "fast-check";
import { assertEquals, assertRejects } from "@std/assert";
import { CapacityMismatchError } from "../mod.ts";
import { StoreModel } from "./_store_model.ts";
import { redisFixture, sleep } from "./_redis_fixture.ts";
import { keyNames } from "./_store_probe.ts";
import { NoticeLog } from "./_store_notices.ts";
import * as step from "./_store_steps.ts";

const RUNS = Number(Deno.env.get("PROCPOOL_RUNS") ?? 40);
let realLapses = Math.max(5, Math.ceil(RUNS / 8));

type Cmd = fc.AsyncCommand<StoreModel, Run>;
type Run = step.Real;

// A holder may contain ':' (lease members are "<fence>:<holder>"); C has
// longer leases than the others (leaseMs is per runtime; only the limit must agree).
// Each is named as a runtime names itself on Redis, "<limit>/<name>"
// (redisHolder): the key's limit survives a lost state hash in those names.
const NAMES = ["A", "B", "C", "D:1"];
const LIMITS = [1, 2, 3, 4];
const namedFor = (limit: number) => NAMES.map((name) => `${limit}/${name}`);
/** The holders of the run going on (its limit's names). */
let HOLDERS = namedFor(LIMITS[0]);
/** A holder, by its index in HOLDERS (the names depend on the run's limit). */
const holderArb = fc.nat({ max: NAMES.length - 1 });
/** Which of a holder's fences a call names (bit i: the i-th known one), and what else. */
const pickArb = fc.record({
  mask: fc.oneof({ arbitrary: fc.constant(0xff), weight: 2 }, fc.nat({ max: 31 })), // often all
  extra: fc.constantFrom("none", "none", "foreign", "unknown", "twice", "notice"),
});
type Pick = typeof pickArb extends fc.Arbitrary<infer T> ? T : never;

function choose(m: StoreModel, h: string, { mask, extra }: Pick): number[] {
  const mine = [...m.knownOf(h)].sort((a, b) => a - b);
  const fences = mine.filter((_, i) => (mask >> i) & 1);
  if (extra === "foreign") {
    const theirs = [...m.leases].find(([, lease]) => lease.holder !== h);
    if (theirs) fences.push(theirs[0]);
  } else if (extra === "unknown") fences.push(1); // below Redis's clock in µs: never granted
  else if (extra === "twice" && fences.length > 0) fences.push(fences[0]);
  // Handed over and heard of by its "granted" notice alone, as a runtime does: no reply named them yet.
  else if (extra === "notice") fences.push(...m.handed.get(h) ?? []);
  return fences;
}

/**
 * Calls on leases go mostly to holders that have some: index i < 9 picks among
 * those `has` accepts, a higher one (or none accepted) among all holders.
 */
const whoArb = fc.nat({ max: 11 });
function who(i: number, has: (h: string) => boolean): string {
  const some = HOLDERS.filter(has);
  return some.length > 0 && i < 9 ? some[i % some.length] : HOLDERS[i % HOLDERS.length];
}
const knows = (m: StoreModel) => (h: string) => m.knownOf(h).size > 0;
const holds = (m: StoreModel) => (h: string) => m.held(h) > 0;

const label = (name: string, h: string | number, rest: unknown) =>
  `${name}(${typeof h === "number" ? `#${h}` : h}, ${JSON.stringify(rest)})`;
/** A holder's label: its name without the limit. */
const named = (i: number) => NAMES[i];

function command(name: string, run: (m: StoreModel, r: Run) => Promise<void>, text: string): Cmd {
  return { check: () => true, run, toString: () => text || name };
}

const acquireArb = fc.tuple(holderArb, fc.nat({ max: 5 })).map(([h, n]) =>
  command("acquire", (m, r) => step.acquire(m, r, HOLDERS[h], n), label("acquire", named(h), n))
);
const releaseArb = fc.tuple(whoArb, pickArb).map(([i, pick]) =>
  command("release", (m, r) => {
    const h = who(i, knows(m));
    return step.release(m, r, h, choose(m, h, pick));
  }, label("release", i, pick))
);

// Acquire and release twice as often as the rest: together they make the hand-overs.
const commandArbs = [
  acquireArb,
  acquireArb,
  releaseArb,
  releaseArb,
  fc.tuple(whoArb, pickArb).map(([i, pick]) =>
    command("renew", async (m, r) => {
      const h = who(i, knows(m));
      await step.renew(m, r, h, choose(m, h, pick));
    }, label("renew", i, pick))
  ),
  fc.tuple(holderArb, fc.nat({ max: 4 })).map(([h, n]) =>
    command("wait", async (m, r) => {
      await step.wait(m, r, HOLDERS[h], n);
    }, label("wait", named(h), n))
  ),
  // What a runtime does at dispose (S6): everything back, the wait withdrawn,
  // and what was handed to it meanwhile back too.
  whoArb.map((i) =>
    command("leave", async (m, r) => {
      const h = who(i, (h) => knows(m)(h) || m.waits.has(h));
      await step.release(m, r, h, [...m.knownOf(h)]);
      const { handed = [] } = await step.wait(m, r, h, 0);
      if (handed.length > 0) await step.release(m, r, h, handed);
    }, label("leave", i, ""))
  ),
  fc.tuple(whoArb, pickArb, fc.boolean(), fc.boolean()).map(([i, pick, waitToo, real]) =>
    command("lapse", (m, r) => {
      const h = who(i, (h) => holds(m)(h) || m.waits.has(h));
      return lapse(m, r, h, liveOf(m, h, pick.mask), waitToo, real);
    }, label("lapse", i, { mask: pick.mask, waitToo, real }))
  ),
  fc.tuple(holderArb, fc.boolean()).map(([h, viaWait]) =>
    command(
      "mismatch",
      (m, r) => mismatch(m, r, HOLDERS[h], viaWait),
      label("mismatch", named(h), viaWait),
    )
  ),
  fc.tuple(fc.constantFrom("leases", "waiters", "holders", "state" as const), holderArb).map((
    [name, h],
  ) => command("lose", (m, r) => lose(m, r, name, HOLDERS[h]), label("lose", named(h), name))),
];

// One key goes on its own (an eviction, a stray DEL); the next call, any
// holder's renewal of nothing, finds the rest agreeing with what is left: the
// leases and the wait records are the truth, the counts follow them, and the
// key's limit comes back from the holders' names (the probe checks '#limit';
// a later mismatch step, that it is still refused).
async function lose(
  m: StoreModel,
  r: Run,
  name: "leases" | "waiters" | "holders" | "state",
  h: string,
) {
  // A lost state hash leaves wait records whose runtimes count as waiting
  // only once they ask again, which this model does not follow: only without any.
  if (name === "state" && m.waits.size > 0) return;
  await r.redis.del(keyNames(r.key)[name]);
  r.trace.add(`lose(${name})`);
  // Holders counted again from the leases were told nothing: the next new waiter tells them.
  if (name !== "waiters" && m.leases.size > 0) m.told = undefined;
  if (name === "leases") m.leases.clear();
  if (name === "waiters") m.waits.clear();
  // The leases handed over that no reply has named went with the hash.
  if (name === "state") m.handed.clear();
  await step.renew(m, r, h, []);
}

/** Some of h's live leases, told to it or not (bit i: the i-th). */
function liveOf(m: StoreModel, h: string, mask: number): number[] {
  const live = [...m.leases].filter(([, lease]) => lease.holder === h && !lease.lapsed);
  return live.map(([fence]) => fence).sort((a, b) => a - b).filter((_, i) => (mask >> i) & 1);
}

// The deadlines of some of h's leases (and of its wait record) pass.
async function lapse(
  m: StoreModel,
  r: Run,
  h: string,
  fences: number[],
  waitToo: boolean,
  real: boolean,
): Promise<void> {
  if (real && realLapses > 0) {
    realLapses--;
    const { lost } = await step.renew(m, r, h, fences, r.short);
    const lapsed = fences.filter((fence) => !lost.includes(fence));
    m.lapse(h, lapsed, true); // the renewal set its wait record to 20 ms too
    await sleep(40); // past those deadlines on any clock
    await step.check(m, r, r.trace.add(`lapsed for real (${h}, [${lapsed}])`));
    return;
  }
  // What time would do, at once: the deadlines move into the past, and with
  // them the script's note of the earliest one (meta's 'due', a time no later
  // than any deadline: passed too, so the next call looks for lapsed ones).
  const k = keyNames(r.key);
  for (const fence of fences) await r.redis.zadd(k.leases, "XX", 0, `${fence}:${h}`);
  if (waitToo && m.waits.has(h)) await r.redis.zadd(k.waiters, "XX", 0, h);
  if (await r.redis.hexists(k.state, "#due")) await r.redis.hset(k.state, "#due", "0");
  m.lapse(h, fences, waitToo);
  await step.check(m, r, r.trace.add(`lapse(${h}, [${fences}], wait ${waitToo})`));
}

// S7: a holder with another limit is refused while anything is live on the key.
async function mismatch(m: StoreModel, r: Run, h: string, viaWait: boolean) {
  if (!m.liveAfterReclaim()) return; // it would set the key's limit instead
  const what = r.trace.add(`mismatch(${h}, ${viaWait ? "wait" : "acquire"})`);
  await assertRejects(
    () => viaWait ? r.other.wait(h, 1) : r.other.acquire(h, 1),
    CapacityMismatchError,
    undefined,
    what,
  );
  m.refused();
  assertEquals(m.outbox, [], `${what}: a refused call publishes nothing`);
  await step.check(m, r, what);
}

Deno.test("lease store invariants against a real redis-server", async (t) => {
  await using fx = await redisFixture();
  // One key for every run (the subscriptions stay), emptied before each.
  const key = "fuzz";
  const notices = await NoticeLog.open(fx.store({ key }), LIMITS.flatMap(namedFor));
  const names = keyNames(key);
  const emptied = Object.values(names).filter((name) => name !== names.fence);

  try {
    await t.step(
      `random calls by ${HOLDERS.length} holders on one key keep every invariant (${RUNS} runs)`,
      async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom(...LIMITS),
            fc.commands(commandArbs, { maxCommands: 40, size: "max" }),
            async (limit, cmds) => {
              await fx.redis.del(...emptied);
              await notices.reset(fx.redis, key);
              HOLDERS = namedFor(limit);
              const run: Run = {
                redis: fx.redis,
                key,
                trace: new step.Trace(),
                notices,
                stores: new Map(
                  HOLDERS.map((h) => [h, fx.store({ key, limit, leaseMs: step.leaseMsOf(h) })]),
                ),
                short: fx.store({ key, limit, leaseMs: 20 }),
                other: fx.store({ key, limit: limit + 1, leaseMs: 10_000 }),
              };
              const model = new StoreModel(limit, step.leaseMsOf);
              await fc.asyncModelRun(() => ({ model, real: run }), cmds);
              await notices.settle(fx.redis, key, run.trace.calls.slice(-6).join(" | "));
            },
          ),
          { numRuns: RUNS },
        );
      },
    );
  } finally {
    await notices.close();
  }
});
