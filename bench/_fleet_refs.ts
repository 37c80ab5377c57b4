// Two minimal semaphores on Redis, references for the hand-off row of
// bench:fleet: what a release-notify design costs at the least on this
// machine, without leases, renewals, fairness or fencing.
//   ref-notify: a release publishes; every waiter in every process then
//     tries to acquire again (the path procpool's lease manager takes:
//     release → notice → acquire round trip → start).
//   ref-grant: a release hands the slot to the longest waiter inside Redis
//     and publishes its name; that waiter starts on the notice, with no
//     round trip of its own (release → notice → start).
import { Redis } from "ioredis";
import type { FleetLimiter, LimiterOptions } from "./_fleet_limiters.ts";

/** If a notice were lost (never on loopback), a waiter looks again after this long. */
const FALLBACK_MS = 200;

const NOTIFY_ACQUIRE = `
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], 0, ARGV[2]) return 1
end
return 0`;
const NOTIFY_RELEASE = `
redis.call('ZREM', KEYS[1], ARGV[1]) redis.call('PUBLISH', KEYS[2], 'r') return 1`;

const GRANT_ACQUIRE = `
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 1 end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) and redis.call('LLEN', KEYS[2]) == 0 then
  redis.call('ZADD', KEYS[1], 0, ARGV[2]) return 1
end
if redis.call('LPOS', KEYS[2], ARGV[2]) == false then redis.call('RPUSH', KEYS[2], ARGV[2]) end
return 0`;
const GRANT_RELEASE = `
redis.call('ZREM', KEYS[1], ARGV[1])
local next = redis.call('LPOP', KEYS[2])
if next then
  redis.call('ZADD', KEYS[1], 0, next)
  redis.call('PUBLISH', KEYS[3], next)
end
return 1`;

type Scripted = Redis & Record<string, (...args: (string | number)[]) => Promise<number>>;

async function connect(port: number): Promise<[Scripted, Redis]> {
  const redis = new Redis({ host: "127.0.0.1", port, lazyConnect: true });
  await redis.connect();
  const subscriber = redis.duplicate();
  return [redis as Scripted, subscriber];
}

function define(redis: Redis, name: string, keys: number, lua: string): void {
  redis.defineCommand(name, { numberOfKeys: keys, lua });
}

/** Resolves true on `wake()`, false after FALLBACK_MS, whichever first. */
function wakeable(): { promise: Promise<boolean>; wake: () => void } {
  const { promise, resolve } = Promise.withResolvers<boolean>();
  const timer = setTimeout(() => resolve(false), FALLBACK_MS);
  return { promise, wake: () => (clearTimeout(timer), resolve(true)) };
}

export async function openNotifyRef({ port, key, limit }: LimiterOptions): Promise<FleetLimiter> {
  const [redis, subscriber] = await connect(port);
  define(redis, "refAcquire", 1, NOTIFY_ACQUIRE);
  define(redis, "refRelease", 2, NOTIFY_RELEASE);
  const channel = `${key}:released`;
  const sleepers = new Set<() => void>();
  subscriber.on("message", () => {
    for (const wake of sleepers) wake();
    sleepers.clear();
  });
  await subscriber.subscribe(channel);
  return {
    session: (body) =>
      body(async (job) => {
        const id = crypto.randomUUID();
        for (;;) {
          const sleep = wakeable(); // before the attempt: a release just after it still wakes us
          sleepers.add(sleep.wake);
          if (await redis.refAcquire(key, limit, id) === 1) {
            sleepers.delete(sleep.wake);
            sleep.wake();
            break;
          }
          await sleep.promise;
          sleepers.delete(sleep.wake);
        }
        try {
          await job();
        } finally {
          await redis.refRelease(key, channel, id);
        }
      }),
    close: async () => {
      subscriber.disconnect();
      await redis.quit();
    },
  };
}

export async function openGrantRef({ port, key, limit }: LimiterOptions): Promise<FleetLimiter> {
  const [redis, subscriber] = await connect(port);
  define(redis, "refAcquire", 2, GRANT_ACQUIRE);
  define(redis, "refRelease", 3, GRANT_RELEASE);
  const [held, queue, channel] = [`${key}:held`, `${key}:queue`, `${key}:granted`];
  const granted = new Map<string, () => void>();
  subscriber.on("message", (_channel: string, id: string) => granted.get(id)?.());
  await subscriber.subscribe(channel);
  return {
    session: (body) =>
      body(async (job) => {
        const id = crypto.randomUUID();
        for (;;) {
          const sleep = wakeable();
          granted.set(id, sleep.wake);
          const mine = await redis.refAcquire(held, queue, limit, id) === 1;
          if (mine) sleep.wake();
          // Woken by the notice, the slot is already ours; after the fallback, ask again.
          const notified = await sleep.promise;
          granted.delete(id);
          if (mine || notified) break;
        }
        try {
          await job();
        } finally {
          await redis.refRelease(held, queue, channel, id);
        }
      }),
    close: async () => {
      subscriber.disconnect();
      await redis.quit();
    },
  };
}
