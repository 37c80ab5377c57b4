// One private redis-server and one ioredis client for a test file, plus the
// small helpers the store tests share.
import { Redis } from "ioredis";
import { RedisLeaseStore } from "../src/runtime/shared/redis_store.ts";
import { type RedisServer, startRedisServer } from "./_redis_server.ts";

export interface RedisFixture extends AsyncDisposable {
  readonly server: RedisServer;
  /** The caller's client, as a user would make it. */
  readonly redis: Redis;
  /** A store on a fresh key (each call its own), through `redis`. */
  store(options?: { key?: string; limit?: number; leaseMs?: number }): RedisLeaseStore;
}

let keys = 0;

/** Starts a server and a client; dispose stops both. */
export async function redisFixture(): Promise<RedisFixture> {
  const server = await startRedisServer();
  // Retry quickly: a test that restarts the server should not wait long for the reconnect.
  const redis = new Redis({
    host: "127.0.0.1",
    port: server.port,
    retryStrategy: () => 20,
    lazyConnect: true,
    // disconnect() while reconnecting (a test that killed the server) arms a
    // timer of this length that nothing clears: keep it short, and wait it out.
    disconnectTimeout: 20,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    await server.stop();
    throw error;
  }
  return {
    server,
    redis,
    store: (options = {}) =>
      new RedisLeaseStore(redis, {
        key: options.key ?? `test-${++keys}`,
        limit: options.limit ?? 3,
        leaseMs: options.leaseMs ?? 10_000,
      }),
    async [Symbol.asyncDispose]() {
      const reconnecting = redis.status !== "ready";
      await redis.quit().catch(() => {});
      redis.disconnect();
      if (reconnecting) await sleep(40);
      await server.stop();
    },
  };
}

/** Real time: only for what Redis's own clock must see pass (expiry), kept short. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves with `promise`, or rejects if it takes longer than `ms` (a generous bound, not a timing claim). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `condition()` holds, checking every few ms; rejects after `ms`. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
): Promise<void> {
  const giveUp = performance.now() + ms;
  while (!await condition()) {
    if (performance.now() > giveUp) throw new Error(`${what}: not after ${ms} ms`);
    await sleep(5);
  }
}

/**
 * An ioredis client for a loopback port nothing listens on: it reconnects
 * every 20 ms and never answers. Close it with {@linkcode closeUnreachable}.
 */
export function unreachableRedis(options: { maxRetriesPerRequest?: number | null } = {}): Redis {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const redis = new Redis({
    host: "127.0.0.1",
    port,
    lazyConnect: true,
    ...options,
    // ioredis's disconnect() while reconnecting arms a timer of this length
    // (default 2 s) that nothing clears; it is inherited by duplicate().
    disconnectTimeout: 20,
    retryStrategy: () => 20,
  });
  redis.on("error", () => {});
  return redis;
}

/** Disconnects an {@linkcode unreachableRedis} client and outlasts its 20 ms timers. */
export async function closeUnreachable(redis: Redis): Promise<void> {
  redis.disconnect();
  await sleep(40); // after those 20 ms timers, whatever the machine's load
}
