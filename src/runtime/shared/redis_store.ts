// The lease store on Redis: every operation is one EVALSHA of the lease script
// (_lease_script.ts), which is loaded once per server and re-loaded if the
// server lost it (NOSCRIPT, e.g. after a restart).
import { CapacityMismatchError } from "../../errors.ts";
import { LEASE_SCRIPT } from "./_lease_script.ts";
import type {
  AcquireResult,
  Fence,
  FleetView,
  LeaseStore,
  Notice,
  ReleaseResult,
  ReleaseSubscription,
  RenewResult,
} from "./lease_store.ts";
import type { RedisArgument, RedisClient, RedisConnection } from "./redis_client.ts";

/** The Redis key names and pub/sub channel of one shared capacity. */
export interface RedisKeys {
  readonly keys: readonly string[];
  readonly channel: string;
}

/** Names for `key`, all in the hash slot of `{key}` so the script runs on a cluster too. */
export function redisKeys(key: string): RedisKeys {
  const prefix = `procpool:{${key}}:`;
  return {
    // meta and held: an older procpool's layout, only looked for (_lease_script.ts).
    keys: ["leases", "waiters", "state", "fence", "meta", "held", "holders"].map((name) =>
      prefix + name
    ),
    channel: prefix + "released",
  };
}

/**
 * Where a release tells `holder` of the leases it handed it: a channel per
 * holder, so that a hand-over wakes the one runtime it concerns (the others
 * would compete with it for a CPU at that very moment).
 */
export function grantChannel(channel: string, holder: string): string {
  return `${channel}:${holder}`;
}

/**
 * A new runtime's name in the store, `<limit>/<uuid>`: every lease member and
 * wait record names its holder, so the key's first limit (S7) lives in them as
 * long as they do, and the script finds it there when the state hash is lost.
 * (Internal, like redisKeys: no example, which would import it by a relative path.)
 */
export function redisHolder(limit: number): string {
  return `${limit}/${crypto.randomUUID()}`;
}

let scriptSha: Promise<string> | undefined;
/** The SHA once known: later calls write their EVALSHA at once, not a microtask later. */
let knownSha: string | undefined;

/** The SHA-1 Redis uses to name the lease script, computed here so EVALSHA needs no load first. */
export function leaseScriptSha(): Promise<string> {
  scriptSha ??= crypto.subtle.digest("SHA-1", new TextEncoder().encode(LEASE_SCRIPT)).then(
    (digest) => knownSha = hex(new Uint8Array(digest)),
  );
  return scriptSha;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const RELEASED: Notice = Object.freeze({ kind: "released" });

/** How long closing a pub/sub connection may wait for the server before cutting it. */
const QUIT_TIMEOUT_MS = 1_000;

export interface RedisLeaseStoreOptions {
  readonly key: string;
  readonly limit: number;
  readonly leaseMs: number;
}

/** A {@linkcode LeaseStore} on one Redis server (or cluster), through the caller's client. */
export class RedisLeaseStore implements LeaseStore {
  readonly key: string;
  readonly limit: number;
  readonly leaseMs: number;
  readonly #client: RedisClient;
  readonly #names: RedisKeys;

  constructor(client: RedisClient, options: RedisLeaseStoreOptions) {
    this.#client = client;
    this.key = options.key;
    this.limit = options.limit;
    this.leaseMs = options.leaseMs;
    this.#names = redisKeys(options.key);
  }

  /** A name for a new runtime on this key: it carries the limit (redisHolder). */
  newHolder(): string {
    return redisHolder(this.limit);
  }

  async acquire(holder: string, want: number, tag = 0): Promise<AcquireResult> {
    const reply = await this.#run("acquire", holder, [want, this.leaseMs, tag]);
    this.#checkLimit(reply);
    const view = fleetView(reply);
    return { ...view, granted: reply.slice(6 + reply[5]) };
  }

  async renew(holder: string, fences: readonly Fence[]): Promise<RenewResult> {
    const reply = await this.#run("renew", holder, [this.leaseMs, ...fences]);
    const view = fleetView(reply);
    return { ...view, lost: reply.slice(6 + reply[5]) };
  }

  release(holder: string, fences: readonly Fence[]): Promise<ReleaseResult> {
    // Not async: the EVALSHA is written inside this call (see #run), on the
    // path from one runtime's release to another's start.
    return this.#run("release", holder, fences).then(releaseResult);
  }

  async wait(holder: string, want: number, tag = 0): Promise<FleetView> {
    const reply = await this.#run("wait", holder, [want, tag]);
    this.#checkLimit(reply);
    return fleetView(reply);
  }

  subscribe(onNotice: (notice: Notice) => void, holder: string): ReleaseSubscription {
    const connection = this.#client.duplicate();
    // Without a listener ioredis prints every connection error; the lease
    // manager learns about an unreachable store from its own calls instead.
    connection.on("error", () => {});
    const channel = this.#names.channel;
    const own = grantChannel(channel, holder);
    connection.on("message", (from: string, message: string) => {
      if (from !== channel && from !== own) return;
      if (message.startsWith("g:")) return onNotice(grantNotice(message));
      if (!message.startsWith("w:")) return onNotice(RELEASED);
      const seqEnd = message.indexOf(":", 2);
      const shareEnd = message.indexOf(":", seqEnd + 1);
      onNotice({
        kind: "wanted",
        seq: Number(message.slice(2, seqEnd)),
        share: Number(message.slice(seqEnd + 1, shareEnd)),
        holder: message.slice(shareEnd + 1),
      });
    });
    // ioredis resubscribes by itself after a reconnect, with a promise nobody
    // handles: closed before its reply (a dispose just after Redis came
    // back), it is an unhandled rejection, which ends a Deno program. So this
    // connection resubscribes itself, handling the outcome.
    const options = (connection as { options?: { autoResubscribe?: boolean } }).options;
    if (options !== undefined) options.autoResubscribe = false;
    let readies = 0;
    connection.on("ready", () => {
      if (readies++ > 0) connection.subscribe(channel, own).catch(() => {});
    });
    let subscribed = false;
    const ready = connection.subscribe(channel, own).then(() => {
      subscribed = true;
    });
    let closing: Promise<void> | undefined;
    return {
      ready,
      close: () => closing ??= closeConnection(connection, ready, subscribed),
    };
  }

  #checkLimit(reply: number[]): void {
    if (reply[0] === 1) throw new CapacityMismatchError(this.key, this.limit, reply[1]);
    if (reply[0] === 2) {
      throw new CapacityMismatchError(
        this.key,
        this.limit,
        reply[1],
        `shared capacity ${JSON.stringify(this.key)} is in use by runtimes of an older procpool ` +
          `version (the store holds their keys :meta or :held${
            reply[1] >= 0 ? `; their limit ${reply[1]}` : ""
          }), which ` +
          "would not keep the bound together with this one; stop them, or use a new key, then retry",
      );
    }
  }

  /**
   * One EVALSHA. Once the script's SHA is known, the command is written to
   * the client before this returns: no microtask between a release and its
   * send.
   */
  #run(op: string, holder: string, extra: readonly RedisArgument[]): Promise<number[]> {
    if (knownSha === undefined) {
      return leaseScriptSha().then(() => this.#run(op, holder, extra));
    }
    const { keys, channel } = this.#names;
    const args: RedisArgument[] = [knownSha, keys.length];
    for (const key of keys) args.push(key);
    args.push(op, channel, holder, this.limit, this.leaseMs);
    for (const value of extra) args.push(value);
    let call: Promise<number[]>;
    try {
      call = this.#client.call("EVALSHA", args) as Promise<number[]>;
    } catch (error) {
      return Promise.reject(error); // as an async call would: callers only handle rejections
    }
    return call.catch((error) => this.#loadAndRun(error, args));
  }

  /** The server lost the script (NOSCRIPT, e.g. after a restart): load it, run again. */
  async #loadAndRun(error: unknown, args: RedisArgument[]): Promise<number[]> {
    if (!(error instanceof Error && error.message.startsWith("NOSCRIPT"))) throw error;
    await this.#client.call("SCRIPT", ["LOAD", LEASE_SCRIPT]);
    return await this.#client.call("EVALSHA", args) as number[];
  }
}

/** {0, others, released, share, seq, handedOver}. */
function releaseResult(reply: number[]): ReleaseResult {
  return {
    othersWaiting: reply[1],
    released: reply[2],
    share: reply[3],
    seq: reply[4],
    handedOver: reply[5],
  };
}

/** The head every reply but release's shares: {0, others, earliestMs, share, seq, h, handed x h, ...}. */
function fleetView(reply: number[]): FleetView {
  return {
    othersWaiting: reply[1],
    earliestMs: reply[2],
    share: reply[3],
    seq: reply[4],
    handed: reply.slice(6, 6 + reply[5]),
  };
}

/** 'g:<fence,...>:<tag>:<seq>:<others>:<share>:<holder>' (the holder last: it may contain ':'). */
function grantNotice(message: string): Notice {
  const fencesEnd = message.indexOf(":", 2);
  const tagEnd = message.indexOf(":", fencesEnd + 1);
  const seqEnd = message.indexOf(":", tagEnd + 1);
  const othersEnd = message.indexOf(":", seqEnd + 1);
  const shareEnd = message.indexOf(":", othersEnd + 1);
  const list = message.slice(2, fencesEnd);
  return {
    kind: "granted",
    // Mostly one: a release hands over what one process stopped holding.
    fences: list.includes(",") ? list.split(",").map(Number) : [Number(list)],
    tag: Number(message.slice(fencesEnd + 1, tagEnd)),
    view: {
      othersWaiting: Number(message.slice(seqEnd + 1, othersEnd)),
      share: Number(message.slice(othersEnd + 1, shareEnd)),
      seq: Number(message.slice(tagEnd + 1, seqEnd)),
    },
    holder: message.slice(shareEnd + 1),
  };
}

/** Quits politely, but never waits on an unreachable server for more than QUIT_TIMEOUT_MS. */
async function closeConnection(
  connection: RedisConnection,
  ready: Promise<void>,
  subscribed: boolean,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    if (subscribed) {
      const timeout = new Promise<void>((resolve) => timer = setTimeout(resolve, QUIT_TIMEOUT_MS));
      await Promise.race([connection.quit().catch(() => {}), timeout]);
    }
  } finally {
    clearTimeout(timer);
    connection.disconnect();
    await ready.catch(() => {}); // a subscribe still pending fails now that the connection is gone
  }
}
