// What the Runtime-level shared-capacity tests share: processes that hold
// their lease until the test lets them go (honouring cancellation, as S1
// requires), recording when they ran; a runtime in a child OS process; and a
// look at the store's keys.
import type { Redis } from "ioredis";
import type { LangL } from "../mod.ts";
import { redisKeys } from "../src/runtime/shared/redis_store.ts";
import { assertEquals } from "@std/assert";
import { FleetChild, type Interval, wallMs } from "./_fleet_harness.ts";
import type { RuntimeWorkerOptions, RuntimeWorkerReport } from "./_runtime_fleet_worker.ts";

/** One process run by {@linkcode Holds}. */
export interface HoldRecord {
  /** Wall-clock µs when the process started, and when it ended (undefined while running). */
  readonly start: number;
  end: number | undefined;
  readonly fence: number | undefined;
  /** `lang.signal.reason` when it ended: undefined unless it was cancelled. */
  reason: unknown;
}

/**
 * A process (`holds.process`) that runs until `release()` is called or it is
 * cancelled, whichever comes first, and returns its fence.
 */
export class Holds {
  readonly records: HoldRecord[] = [];
  #release!: () => void;
  readonly #released = new Promise<void>((resolve) => this.#release = resolve);

  /** Lets every hold end, those running and those still to start. */
  release(): void {
    this.#release();
  }

  get started(): number {
    return this.records.length;
  }

  get running(): number {
    return this.records.filter((record) => record.end === undefined).length;
  }

  /** What ran, a running process counted up to now. */
  get intervals(): Interval[] {
    return this.records.map((record) => [record.start, record.end ?? wallMs() * 1000]);
  }

  get fences(): number[] {
    return this.records.map((record) => record.fence as number);
  }

  readonly process = async (lang: LangL): Promise<number | undefined> => {
    const record: HoldRecord = {
      start: wallMs() * 1000,
      end: undefined,
      fence: lang.fence,
      reason: undefined,
    };
    this.records.push(record);
    try {
      await lang.evalIO((signal) =>
        new Promise<void>((resolve, reject) => {
          const stop = () => reject(signal.reason);
          if (signal.aborted) return stop();
          signal.addEventListener("abort", stop, { once: true });
          this.#released.then(() => {
            signal.removeEventListener("abort", stop);
            resolve();
          });
        })
      );
      return record.fence;
    } finally {
      record.end = wallMs() * 1000;
      record.reason = lang.signal.reason;
    }
  };
}

/** The store's keys for `key`, by name (see redis_store.ts). */
export function storeKeys(key: string): {
  leases: string;
  waiters: string;
  state: string;
  fence: string;
} {
  const [leases, waiters, state, fence] = redisKeys(key).keys;
  return { leases, waiters, state, fence };
}

/** How many runtimes the store has recorded as waiting on `key`. */
export async function waitingRuntimes(redis: Redis, key: string): Promise<number> {
  // Each waiter's count is a field named "w" + holder in the state hash.
  const fields = await redis.hkeys(storeKeys(key).state);
  return fields.filter((field) => field.startsWith("w")).length;
}

/** How many connections the server has (the caller's among them). */
export async function clientCount(redis: Redis): Promise<number> {
  return String(await redis.call("CLIENT", "LIST")).trim().split("\n").length;
}

/**
 * Redis's clock minus this process's wall clock, in ms, as bounds: Redis read
 * its clock between the moments this process sent TIME and got the answer.
 */
export async function redisClockOffset(redis: Redis): Promise<{ low: number; high: number }> {
  const before = wallMs();
  const [seconds, micros] = await redis.time();
  const after = wallMs();
  const redisMs = Number(seconds) * 1000 + Number(micros) / 1000;
  return { low: redisMs - after, high: redisMs - before };
}

const WORKER = new URL("./_runtime_fleet_worker.ts", import.meta.url).pathname;

/** A Runtime in a child OS process (_runtime_fleet_worker.ts). */
export class RuntimeWorker extends FleetChild {
  constructor(options: RuntimeWorkerOptions) {
    super(WORKER, options);
  }

  async ready(): Promise<void> {
    assertEquals(await this.line("ready"), "ready");
  }

  async go(endAtMs: number): Promise<void> {
    await this.send(`go ${endAtMs}`);
  }

  /** The next streamed line (with `stream`), parsed. */
  async next<T>(what: string, ms?: number): Promise<T> {
    return JSON.parse(await this.line(what, ms));
  }

  /** Skips streamed lines up to the final report. */
  async report(): Promise<RuntimeWorkerReport> {
    while (true) {
      const message = await this.next<{ report?: RuntimeWorkerReport }>("report");
      if (message.report !== undefined) return message.report;
    }
  }
}
