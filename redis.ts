/**
 * A capacity shared across OS processes and machines, kept in Redis: every
 * runtime built with the same key runs at most `limit` processes under it, in
 * total. Give it to a runtime as `RuntimeOptions.shared`.
 *
 * @example
 * ```ts
 * import { Redis } from "ioredis";
 * import { redisCapacity } from "@procpool/procpool/redis";
 *
 * const redis = new Redis({ lazyConnect: true }); // your client; procpool never closes it
 * const partnerApi = redisCapacity({ redis, key: "partner-api", limit: 50 });
 * console.assert(partnerApi.limit === 50);
 * redis.disconnect();
 * ```
 *
 * @module
 */
import { requireObject, requirePositiveInteger, show } from "./src/_validate.ts";
import type { RedisClient } from "./src/runtime/shared/redis_client.ts";
import { RedisLeaseStore } from "./src/runtime/shared/redis_store.ts";
import { makeSharedCapacity, type SharedCapacity } from "./src/runtime/shared/shared_capacity.ts";

export type {
  RedisArgument,
  RedisClient,
  RedisConnection,
} from "./src/runtime/shared/redis_client.ts";
export type { SharedCapacity } from "./src/runtime/shared/shared_capacity.ts";

/**
 * The shortest lease `redisCapacity` accepts, in milliseconds. Shorter leases
 * would turn ordinary pauses (a GC, a slow network round trip) into lost leases.
 *
 * @example
 * ```ts
 * import { MIN_LEASE_MS } from "@procpool/procpool/redis";
 * console.assert(MIN_LEASE_MS === 1_000);
 * ```
 */
export const MIN_LEASE_MS = 1_000;

/** The lease time-to-live when `leaseMs` is not given, in milliseconds. */
export const DEFAULT_LEASE_MS = 10_000;

/**
 * What {@linkcode redisCapacity} takes.
 *
 * @example
 * ```ts
 * import { Redis } from "ioredis";
 * import type { RedisCapacityOptions } from "@procpool/procpool/redis";
 * const redis = new Redis({ lazyConnect: true });
 * const options: RedisCapacityOptions = { redis, key: "reports", limit: 4, leaseMs: 5_000 };
 * redis.disconnect();
 * ```
 */
export interface RedisCapacityOptions {
  /** An ioredis client (5.x or 6.x) made by the caller; procpool never closes it. */
  redis: RedisClient;
  /** Names the shared capacity: every runtime with the same key shares one limit. */
  key: string;
  /** A positive safe integer: the fleet-wide bound on running processes for `key`. */
  limit: number;
  /** Lease time-to-live, an integer of at least {@linkcode MIN_LEASE_MS}. Default 10 000. */
  leaseMs?: number;
}

/**
 * Describes a capacity shared through Redis. Only checks its arguments: it
 * neither connects nor sends anything until a runtime uses it.
 *
 * Throws `TypeError` for a wrong type (a `redis` that is not a client, a
 * non-string or empty `key`, a non-number `limit` or `leaseMs`) and
 * `RangeError` for a number out of range (`limit` 0, -1, 1.5, NaN; `leaseMs`
 * below {@linkcode MIN_LEASE_MS}, fractional or NaN).
 *
 * @example
 * ```ts
 * import { Redis } from "ioredis";
 * import { redisCapacity } from "@procpool/procpool/redis";
 * const redis = new Redis({ lazyConnect: true });
 * const capacity = redisCapacity({ redis, key: "thumbnails", limit: 8, leaseMs: 2_000 });
 * console.assert(capacity.key === "thumbnails");
 * redis.disconnect();
 * ```
 */
export function redisCapacity(options: RedisCapacityOptions): SharedCapacity {
  requireObject("redisCapacity options", options);
  const { redis, key, limit, leaseMs = DEFAULT_LEASE_MS } = options;
  requireRedisClient(redis);
  if (typeof key !== "string" || key === "") {
    throw new TypeError(`key must be a non-empty string, got ${show(key)}`);
  }
  requirePositiveInteger("limit", limit);
  if (typeof leaseMs !== "number") {
    throw new TypeError(`leaseMs must be a number, got ${typeof leaseMs} ${show(leaseMs)}`);
  }
  if (!Number.isSafeInteger(leaseMs) || leaseMs < MIN_LEASE_MS) {
    throw new RangeError(
      `leaseMs must be an integer of at least ${MIN_LEASE_MS}, got ${show(leaseMs)}`,
    );
  }
  return makeSharedCapacity(key, limit, {
    leaseMs,
    openStore: () => new RedisLeaseStore(redis, { key, limit, leaseMs }),
  });
}

function requireRedisClient(redis: unknown): asserts redis is RedisClient {
  const candidate = redis as Partial<RedisClient> | null | undefined;
  if (
    typeof candidate !== "object" || candidate === null ||
    typeof candidate.call !== "function" || typeof candidate.duplicate !== "function"
  ) {
    throw new TypeError(
      `redis must be an ioredis client (an object with call() and duplicate()), got ${show(redis)}`,
    );
  }
}
