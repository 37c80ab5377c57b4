// The small part of an ioredis client that procpool uses, typed structurally so
// that clients of ioredis 5.x and 6.x (and a Cluster) both fit without procpool
// importing ioredis itself.

/** Arguments of a Redis command, as ioredis's `call` takes them. */
export type RedisArgument = string | number;

/**
 * An ioredis client made by the caller (`new Redis(...)` from `npm:ioredis`,
 * 5.x or 6.x). procpool sends commands through `call` and makes its own
 * pub/sub connection with `duplicate()`; it never closes this client.
 *
 * @example
 * ```ts
 * import { Redis } from "ioredis";
 * import type { RedisClient } from "@procpool/procpool/redis";
 * const redis = new Redis({ lazyConnect: true });
 * const client: RedisClient = redis;
 * redis.disconnect();
 * ```
 */
export interface RedisClient {
  /** Sends one command; resolves with its reply. */
  call(command: string, args: RedisArgument[]): Promise<unknown>;
  /** A new connection with the same options. */
  duplicate(): RedisConnection;
}

/**
 * A connection procpool made with {@linkcode RedisClient.duplicate}, which it
 * uses for pub/sub and closes when done.
 *
 * @example
 * ```ts
 * import { Redis } from "ioredis";
 * import type { RedisConnection } from "@procpool/procpool/redis";
 * const redis = new Redis({ lazyConnect: true });
 * const connection: RedisConnection = redis.duplicate();
 * connection.disconnect();
 * redis.disconnect();
 * ```
 */
export interface RedisConnection {
  /** Sends one command; resolves with its reply. */
  call(command: string, args: RedisArgument[]): Promise<unknown>;
  /** Enters subscriber mode on `channels`. */
  subscribe(...channels: string[]): Promise<unknown>;
  /** Listens for `"message"` (channel, message), `"error"` and `"ready"` (connected) events. */
  // deno-lint-ignore no-explicit-any
  on(event: "message" | "error" | "ready", listener: (...args: any[]) => void): unknown;
  /** Closes gracefully, after pending replies. */
  quit(): Promise<unknown>;
  /** Closes at once. */
  disconnect(): void;
}
