// redisCapacity at the public boundary (API.md rule 10): named errors that
// name the argument and the value, and nothing connected or left running.
// deno-lint-ignore-file no-explicit-any
import { assertEquals, assertThrows } from "@std/assert";
import { Redis } from "ioredis";
import { Redis as Redis5 } from "ioredis5";
import { DEFAULT_LEASE_MS, MIN_LEASE_MS, redisCapacity, type RedisClient } from "../redis.ts";
import { backendOf } from "../src/runtime/shared/shared_capacity.ts";

Deno.test("redisCapacity", async (t) => {
  // lazyConnect: these clients never open a socket, so a connection would show as a leak.
  const redis = new Redis({ lazyConnect: true });
  try {
    await t.step("describes the capacity without connecting", () => {
      const capacity = redisCapacity({ redis, key: "api", limit: 50 });
      assertEquals({ ...capacity }, { key: "api", limit: 50 });
      assertEquals(backendOf(capacity)?.leaseMs, DEFAULT_LEASE_MS);
      assertEquals(
        backendOf(redisCapacity({ redis, key: "api", limit: 50, leaseMs: 2_000 }))
          ?.leaseMs,
        2_000,
      );
      assertEquals(redis.status, "wait");
    });

    await t.step("clients of ioredis 5.x and 6.x both fit RedisClient", () => {
      const five = new Redis5({ lazyConnect: true });
      try {
        const clients: RedisClient[] = [redis, five];
        for (const client of clients) redisCapacity({ redis: client, key: "k", limit: 1 });
      } finally {
        five.disconnect();
      }
    });

    const rows: [string, () => unknown, new (...args: any[]) => Error, string[]][] = [
      ["limit 0", () => redisCapacity({ redis, key: "k", limit: 0 }), RangeError, ["limit", "0"]],
      ["limit -1", () => redisCapacity({ redis, key: "k", limit: -1 }), RangeError, [
        "limit",
        "-1",
      ]],
      ["limit 1.5", () => redisCapacity({ redis, key: "k", limit: 1.5 }), RangeError, [
        "limit",
        "1.5",
      ]],
      ["limit NaN", () => redisCapacity({ redis, key: "k", limit: NaN }), RangeError, [
        "limit",
        "NaN",
      ]],
      ["limit Infinity", () => redisCapacity({ redis, key: "k", limit: Infinity }), RangeError, [
        "limit",
        "Infinity",
      ]],
      ['limit "3"', () => redisCapacity({ redis, key: "k", limit: "3" as any }), TypeError, [
        "limit",
        '"3"',
      ]],
      ["limit missing", () => redisCapacity({ redis, key: "k" } as any), TypeError, [
        "limit",
        "undefined",
      ]],
      ['key ""', () => redisCapacity({ redis, key: "", limit: 1 }), TypeError, ["key", '""']],
      ["key 7", () => redisCapacity({ redis, key: 7 as any, limit: 1 }), TypeError, ["key", "7"]],
      ["key missing", () => redisCapacity({ redis, limit: 1 } as any), TypeError, [
        "key",
        "undefined",
      ]],
      [
        `leaseMs ${MIN_LEASE_MS - 1}`,
        () => redisCapacity({ redis, key: "k", limit: 1, leaseMs: MIN_LEASE_MS - 1 }),
        RangeError,
        [
          "leaseMs",
          String(MIN_LEASE_MS),
          String(MIN_LEASE_MS - 1),
        ],
      ],
      [
        "leaseMs NaN",
        () => redisCapacity({ redis, key: "k", limit: 1, leaseMs: NaN }),
        RangeError,
        [
          "leaseMs",
          "NaN",
        ],
      ],
      [
        "leaseMs 1500.5",
        () => redisCapacity({ redis, key: "k", limit: 1, leaseMs: 1500.5 }),
        RangeError,
        [
          "leaseMs",
          "1500.5",
        ],
      ],
      [
        'leaseMs "2000"',
        () => redisCapacity({ redis, key: "k", limit: 1, leaseMs: "2000" as any }),
        TypeError,
        [
          "leaseMs",
          '"2000"',
        ],
      ],
      ["redis {}", () => redisCapacity({ redis: {} as any, key: "k", limit: 1 }), TypeError, [
        "redis",
        "an object",
      ]],
      [
        'redis "localhost"',
        () => redisCapacity({ redis: "localhost" as any, key: "k", limit: 1 }),
        TypeError,
        [
          "redis",
          '"localhost"',
        ],
      ],
      ["redis missing", () => redisCapacity({ key: "k", limit: 1 } as any), TypeError, [
        "redis",
        "undefined",
      ]],
      ["options null", () => redisCapacity(null as any), TypeError, ["options", "null"]],
      ["redis null", () => redisCapacity({ redis: null as any, key: "k", limit: 1 }), TypeError, [
        "redis",
        "null",
      ]],
      // A node-redis client, or half an ioredis one: both need call() and duplicate().
      [
        "redis with sendCommand only",
        () => redisCapacity({ redis: { sendCommand() {} } as any, key: "k", limit: 1 }),
        TypeError,
        ["redis", "an object"],
      ],
      [
        "redis without duplicate",
        () => redisCapacity({ redis: { call: () => {} } as any, key: "k", limit: 1 }),
        TypeError,
        ["redis", "duplicate"],
      ],
      ["key null", () => redisCapacity({ redis, key: null as any, limit: 1 }), TypeError, [
        "key",
        "null",
      ]],
      ["limit 2^53", () => redisCapacity({ redis, key: "k", limit: 2 ** 53 }), RangeError, [
        "limit",
        String(2 ** 53),
      ]],
      [
        "leaseMs Infinity",
        () => redisCapacity({ redis, key: "k", limit: 1, leaseMs: Infinity }),
        RangeError,
        ["leaseMs", "Infinity"],
      ],
      [
        "leaseMs -2000",
        () => redisCapacity({ redis, key: "k", limit: 1, leaseMs: -2_000 }),
        RangeError,
        ["leaseMs", "-2000"],
      ],
    ];
    for (const [label, call, error, mentions] of rows) {
      await t.step(`bad input: ${label}`, () => {
        const thrown = assertThrows(call, error);
        for (const word of mentions) {
          if (!thrown.message.includes(word)) {
            throw new Error(`message ${JSON.stringify(thrown.message)} does not mention ${word}`);
          }
        }
      });
    }
  } finally {
    redis.disconnect();
  }
});
