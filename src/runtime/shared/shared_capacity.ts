// What redisCapacity (and later kvCapacity) hands to a Runtime: a public face
// with the key and the limit, and, out of the user's reach, how to open the
// store behind it.
import type { LeaseStore } from "./lease_store.ts";

/**
 * A capacity shared by every runtime that uses the same store and key: at most
 * `limit` processes run under `key` across all of them. Made by
 * `redisCapacity` (`@procpool/procpool/redis`); opaque otherwise.
 *
 * @example
 * ```ts
 * import { Redis } from "ioredis";
 * import { redisCapacity, type SharedCapacity } from "@procpool/procpool/redis";
 * const redis = new Redis({ lazyConnect: true });
 * const capacity: SharedCapacity = redisCapacity({ redis, key: "partner-api", limit: 50 });
 * console.assert(capacity.key === "partner-api" && capacity.limit === 50);
 * redis.disconnect();
 * ```
 */
export interface SharedCapacity {
  /** Names the capacity; runtimes with the same key (and store) share one limit. */
  readonly key: string;
  /** The fleet-wide bound on running processes for `key`. */
  readonly limit: number;
}

/** How a runtime reaches the store of a shared capacity. */
export interface SharedCapacityBackend {
  readonly leaseMs: number;
  /** Opens the store; the runtime owns what it returns (and closes its subscriptions). */
  openStore(): LeaseStore;
}

const backends = new WeakMap<SharedCapacity, SharedCapacityBackend>();

/** Builds the public face of a capacity and remembers its backend. */
export function makeSharedCapacity(
  key: string,
  limit: number,
  backend: SharedCapacityBackend,
): SharedCapacity {
  const capacity: SharedCapacity = Object.freeze({ key, limit });
  backends.set(capacity, backend);
  return capacity;
}

/** The backend of a capacity made by this library; undefined for anything else. */
export function backendOf(capacity: unknown): SharedCapacityBackend | undefined {
  return typeof capacity === "object" && capacity !== null
    ? backends.get(capacity as SharedCapacity)
    : undefined;
}
