// The limiters bench:fleet compares, behind one shape: a session in which a
// job runs while holding one slot of a capacity shared, through Redis, by
// every OS process on the same key. Each is set up the way its documentation
// shows, with a lease/lock time of 10 s.
import { Redis } from "ioredis";
import Bottleneck from "bottleneck";
import { Semaphore } from "redis-semaphore";
import { Runtime } from "../mod.ts";
import { redisCapacity } from "../redis.ts";
import { LeaseManager } from "../src/runtime/shared/lease_manager.ts";
import { RedisLeaseStore } from "../src/runtime/shared/redis_store.ts";
import { lease } from "../tests/_lease_waiter.ts";
import { openGrantRef, openNotifyRef } from "./_fleet_refs.ts";

export const LIBRARIES = [
  "procpool",
  "redis-semaphore",
  "bottleneck",
  "lease-manager",
  "ref-notify",
  "ref-grant",
] as const;
export type Library = typeof LIBRARIES[number];

/** The lease (procpool) or lock (redis-semaphore) time-to-live. */
export const LEASE_MS = 10_000;

export interface LimiterOptions {
  port: number;
  key: string;
  /** The fleet-wide bound. */
  limit: number;
  /** This process's own bound (procpool's maxProcesses); the others have none. */
  local: number;
}

/** Runs `job` while holding one slot; rejects if the slot could not be had. */
export type RunJob = (job: () => Promise<void>) => Promise<void>;

export interface FleetLimiter {
  /** Calls `body` with a way to run jobs, and resolves after it. */
  session(body: (run: RunJob) => Promise<void>): Promise<void>;
  /** Gives back what it holds and closes its connections. */
  close(): Promise<void>;
}

/** A connected limiter, warmed up by one empty job (scripts loaded, subscriptions made). */
export async function openLimiter(
  library: Library,
  options: LimiterOptions,
): Promise<FleetLimiter> {
  const limiter = await OPEN[library](options);
  await limiter.session((run) => run(() => Promise.resolve()));
  return limiter;
}

const OPEN: Record<Library, (options: LimiterOptions) => Promise<FleetLimiter>> = {
  procpool: openProcpool,
  "redis-semaphore": openSemaphore,
  bottleneck: openBottleneck,
  "lease-manager": openLeaseManager,
  "ref-notify": openNotifyRef,
  "ref-grant": openGrantRef,
};

async function connect(port: number): Promise<Redis> {
  const redis = new Redis({ host: "127.0.0.1", port, lazyConnect: true });
  await redis.connect();
  return redis;
}

/**
 * procpool as API.md shows it: a Runtime whose `shared` capacity is
 * `redisCapacity` on the caller's ioredis client; a job is a process, forked
 * and awaited.
 */
async function openProcpool({ port, key, limit, local }: LimiterOptions): Promise<FleetLimiter> {
  const redis = await connect(port);
  const shared = redisCapacity({ redis, key, limit, leaseMs: LEASE_MS });
  const runtime = new Runtime({ maxProcesses: local, shared });
  return {
    session: (body) =>
      runtime.runApp((app) =>
        body(async (job) => {
          await app.awaitResult(await app.forkProcess(job));
        })
      ),
    close: async () => {
      await runtime[Symbol.asyncDispose]();
      await redis.quit();
    },
  };
}

/**
 * redis-semaphore 5.8 with its defaults (it polls every `retryInterval` = 10 ms)
 * except `acquireTimeout`, raised from 10 s so that the idle row's waiters
 * outlast their 10 s wait. One `Semaphore` per job, as its README does.
 */
async function openSemaphore({ port, key, limit }: LimiterOptions): Promise<FleetLimiter> {
  const redis = await connect(port);
  const options = { lockTimeout: LEASE_MS, acquireTimeout: 120_000 };
  return {
    session: (body) =>
      body(async (job) => {
        const semaphore = new Semaphore(redis, key, limit, options);
        await semaphore.acquire();
        try {
          await job();
        } finally {
          await semaphore.release();
        }
      }),
    close: async () => void await redis.quit(),
  };
}

/**
 * Bottleneck 2.19.5 in its Redis clustering mode: every process makes a
 * limiter with the same `id`, `datastore: "ioredis"` and `maxConcurrent`; it
 * opens its own client and a duplicate for pub/sub.
 */
async function openBottleneck({ port, key, limit }: LimiterOptions): Promise<FleetLimiter> {
  const limiter = new Bottleneck({
    id: key,
    datastore: "ioredis",
    maxConcurrent: limit,
    clearDatastore: false,
    // Bottleneck otherwise require()s ioredis from its own package, which does not depend on it.
    Redis,
    clientOptions: { host: "127.0.0.1", port },
  });
  const errors: unknown[] = [];
  limiter.on("error", (error: unknown) => errors.push(error));
  await limiter.ready();
  return {
    session: (body) =>
      body(async (job) => {
        if (errors.length > 0) throw errors[0];
        await limiter.schedule(job);
      }),
    close: () => limiter.disconnect(true),
  };
}

/**
 * procpool's lease manager driven directly (no Runtime), as tests/_fleet_worker.ts
 * does: for debugging the harness and telling the Runtime's own cost from the
 * lease protocol's; not a published row.
 */
async function openLeaseManager(options: LimiterOptions): Promise<FleetLimiter> {
  const redis = await connect(options.port);
  const store = new RedisLeaseStore(redis, { ...options, leaseMs: LEASE_MS });
  const manager = new LeaseManager(store, { maxHeld: options.local });
  return {
    session: (body) =>
      body(async (job) => {
        const held = await lease(manager);
        try {
          await job();
        } finally {
          manager.release(held);
        }
      }),
    close: async () => {
      await manager.dispose();
      await redis.quit();
    },
  };
}
