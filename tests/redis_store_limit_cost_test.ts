// What a new waiter and a hand-over cost Redis does not grow with the key's
// limit (review: a new waiter read every lease to find the holders to tell,
// and a hand-over once did too; at limit 5 000 that was 5 000 members per
// call). INFO commandstats counts commands, not what each one touches, so
// the script runs here instrumented: every redis.call it makes is counted by
// its arguments and its reply's elements (a ZRANGE of every lease counts each
// one), and the same calls at limit 10 and at limit 5 000 must count the same.
// Counted, not timed.
import { assertEquals } from "@std/assert";
import type { Redis } from "ioredis";
import { LEASE_SCRIPT } from "../src/runtime/shared/_lease_script.ts";
import { RedisLeaseStore } from "../src/runtime/shared/redis_store.ts";
import type { RedisArgument, RedisClient } from "../src/runtime/shared/redis_client.ts";
import { redisFixture } from "./_redis_fixture.ts";

/**
 * The lease script with each redis.call counted (arguments + reply elements);
 * it replies {count, the script's own reply}.
 */
const COUNTED_SCRIPT = `
local touched = 0
local function counted_call(...)
  local reply = redis.call(...)
  touched = touched + select('#', ...) + (type(reply) == 'table' and #reply or 1)
  return reply
end
local function main()
${LEASE_SCRIPT.replaceAll("redis.call(", "counted_call(")}
end
local reply = main()
return {touched, reply}
`;

/** A client that runs the counted script where the store sends EVALSHA, and keeps the last count. */
class CountingClient implements RedisClient {
  last = NaN;
  constructor(readonly redis: Redis) {}
  async call(command: string, args: RedisArgument[]): Promise<unknown> {
    if (command !== "EVALSHA") return await this.redis.call(command, args);
    const [touched, reply] = await this.redis.call(
      "EVAL",
      [COUNTED_SCRIPT, ...args.slice(1)],
    ) as [number, unknown];
    this.last = touched;
    return reply;
  }
  duplicate(): never {
    throw new Error("not used here");
  }
  /** How many elements `call`'s one script run touched. */
  async touched(call: () => Promise<unknown>): Promise<number> {
    this.last = NaN;
    await call();
    return this.last;
  }
}

/** The same sequence of calls on a key of `limit`, one holder holding every lease. */
async function costsAt(redis: Redis, limit: number): Promise<Record<string, number>> {
  const client = new CountingClient(redis);
  const store = new RedisLeaseStore(client, { key: `limit-${limit}`, limit, leaseMs: 60_000 });
  const { granted } = await store.acquire("A", limit);
  assertEquals(granted.length, limit);
  const cost: Record<string, number> = {};
  // New waiters: each tells the holders ('w' notices).
  cost.acquireThatWaits = await client.touched(() => store.acquire("B", 1, 1));
  cost.newWait = await client.touched(() => store.wait("C", 1, 2));
  cost.waitRefresh = await client.touched(() => store.wait("B", 1, 3));
  cost.renew = await client.touched(() => store.renew("A", granted.slice(0, 1)));
  // Hand-overs: one to B, one to C, then a release nobody waits for.
  cost.handOver = await client.touched(async () => {
    assertEquals((await store.release("A", granted.slice(0, 1))).handedOver, 1);
  });
  cost.lastHandOver = await client.touched(async () => {
    assertEquals((await store.release("A", granted.slice(1, 2))).handedOver, 1);
  });
  cost.release = await client.touched(async () => {
    assertEquals((await store.release("A", granted.slice(2, 3))).released, 1);
  });
  for (const [call, n] of Object.entries(cost)) {
    if (!(n > 0)) throw new Error(`${call}: no count (${n})`);
  }
  return cost;
}

Deno.test("redis lease store: a new waiter and a hand-over cost the same at limit 10 and 5 000", async () => {
  await using fx = await redisFixture();
  const small = await costsAt(fx.redis, 10);
  const large = await costsAt(fx.redis, 5_000);
  assertEquals(large, small);
});
