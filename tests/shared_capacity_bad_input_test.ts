// deno-lint-ignore-file no-explicit-any
// Bad input at the Runtime boundary for a shared capacity (API.md rule 10):
// a `shared` that redisCapacity did not make is a TypeError naming `shared`
// and the value, and a runtime refused for any reason opened nothing. (The
// options of redisCapacity itself are checked in redis_capacity_test.ts.)
import { assertEquals, assertThrows } from "@std/assert";
import { Redis } from "ioredis";
import { Runtime } from "../mod.ts";
import { redisCapacity, type RedisClient } from "../redis.ts";
import { caseTable, ok, runTable } from "./_bad_input.ts";

// lazyConnect: this client never opens a socket unless procpool sends something.
const redis = new Redis({ lazyConnect: true });
const capacity = redisCapacity({ redis, key: "k", limit: 2 });

const { cases, add } = caseTable();
const top = add("top", false, TypeError);
for (
  const [label, value, shown] of [
    ["{ key, limit }", { key: "k", limit: 2 }, "an object"],
    ["a copy of a capacity", { ...capacity }, "an object"],
    ["an object made from a capacity", Object.create(capacity), "an object"],
    ["a URL string", "redis://127.0.0.1:6379", '"redis://127.0.0.1:6379"'],
    ["a number", 2, "2"],
    ["null", null, "null"],
    ["the client itself", redis, "an object"],
    ["redisCapacity itself", redisCapacity, "a function"],
  ] as const
) {
  top(`shared ${label}`, () => new Runtime({ ...ok, shared: value as any }), "shared", shown);
}

Deno.test("bad input: a shared capacity not made by redisCapacity", async () => {
  try {
    await runTable(cases);
  } finally {
    redis.disconnect();
  }
});

Deno.test("a runtime refused at construction opens nothing on its shared capacity", async (t) => {
  const client = new Redis({ lazyConnect: true });
  const sent: string[] = [];
  let duplicates = 0;
  const counting: RedisClient = {
    call: (command, args) => {
      sent.push(command);
      return client.call(command, args);
    },
    duplicate: () => {
      duplicates++;
      return client.duplicate();
    },
  };
  try {
    const shared = redisCapacity({ redis: counting, key: "refused", limit: 2 });
    for (
      const [label, options, error] of [
        ["maxProcesses 0", { maxProcesses: 0, shared }, RangeError],
        ["maxProcesses '2'", { maxProcesses: "2", shared }, TypeError],
        ["logger null", { maxProcesses: 2, shared, logger: null }, TypeError],
        ["seed NaN", { maxProcesses: 2, shared, seed: NaN }, RangeError],
      ] as const
    ) {
      await t.step(label, () => {
        assertThrows(() => new Runtime(options as any), error);
        assertEquals({ sent, duplicates, status: client.status }, {
          sent: [],
          duplicates: 0,
          status: "wait",
        });
      });
    }
  } finally {
    client.disconnect();
  }
});
