// Reads one key's lease store straight from Redis, in one MULTI (a consistent
// snapshot), and checks it against the model (_store_model.ts): the bound, the
// held counts, the leases and their deadlines, the wait records, the record of
// hand-overs, the fence counter, the keys' expiry, meta's 'due' and counts,
// and the holders set.
import { assert, assertEquals } from "@std/assert";
import type { Redis } from "ioredis";
import { redisKeys } from "../src/runtime/shared/redis_store.ts";
import type { StoreModel } from "./_store_model.ts";

/** The keys the invariants read, by the name redisKeys gives them (others may be added). */
const NAMES = ["leases", "waiters", "state", "fence", "holders"] as const;
type Name = typeof NAMES[number];

export interface StoreState {
  /** Redis's clock, ms. */
  readonly nowMs: number;
  /** fence -> holder and deadline (ms, Redis clock). */
  readonly leases: Map<number, { holder: string; deadline: number }>;
  readonly held: Record<string, string>;
  /** holder -> leases it waits for (the state hash's fields named "w" + holder). */
  readonly want: Record<string, string>;
  /** holder -> wait record expiry (ms, Redis clock). */
  readonly waiters: Map<string, number>;
  /** holder -> the tag of its wait record (the state hash's fields named "t" + holder). */
  readonly tag: Record<string, string>;
  readonly handed: Record<string, string>;
  readonly metaLimit: string | null;
  /** The number of the last view the key reported (ShareView.seq), kept in meta. */
  readonly metaSeq: string | null;
  /** meta's 'due': a time the script keeps no later than any deadline in leases or waiters. */
  readonly metaDue: string | null;
  /** meta's counts of holders holding, waiting, and both ('#nheld', '#nwant', '#nboth'). */
  readonly metaCounts: { nheld?: string; nwant?: string; nboth?: string };
  /** Whether the state hash exists. */
  readonly hasState: boolean;
  /** The holders set's members: the holders a new waiter tells. */
  readonly holders: string[];
  readonly fence: string | null;
  /** PEXPIRETIME of each key: -2 absent, -1 no expiry. */
  readonly expireAt: Record<Name, number>;
}

export function keyNames(key: string): Record<Name, string> {
  const { keys } = redisKeys(key);
  const named = (name: string) => {
    const found = keys.find((k) => k.endsWith(`:${name}`));
    if (found === undefined) throw new Error(`no key named ${name} among ${keys}`);
    return found;
  };
  return Object.fromEntries(NAMES.map((name) => [name, named(name)])) as Record<Name, string>;
}

export async function readState(redis: Redis, key: string): Promise<StoreState> {
  const k = keyNames(key);
  const tx = redis.multi().time()
    .zrange(k.leases, "0", "-1", "WITHSCORES").hgetall(k.state)
    .zrange(k.waiters, "0", "-1", "WITHSCORES").get(k.fence).smembers(k.holders);
  for (const name of NAMES) tx.call("PEXPIRETIME", k[name]);
  const replies = await tx.exec();
  if (!replies) throw new Error("MULTI aborted");
  const out = replies.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
  const [time, leases, stateHash, waiters, fence, holders] = out;
  const { held, want, tag, handed, meta } = splitState(stateHash as Record<string, string>);
  const [metaLimit, metaSeq, metaDue] = [meta.limit ?? null, meta.seq ?? null, meta.due ?? null];
  const [s, us] = time as string[];
  const pairs = (flat: string[]) =>
    Array.from(
      { length: flat.length / 2 },
      (_, i) => [flat[2 * i], Number(flat[2 * i + 1])] as const,
    );
  return {
    nowMs: Number(s) * 1000 + Number(us) / 1000,
    leases: new Map(
      pairs(leases as string[]).map(([member, deadline]) => {
        const at = member.indexOf(":");
        return [Number(member.slice(0, at)), { holder: member.slice(at + 1), deadline }];
      }),
    ),
    held: held as Record<string, string>,
    want,
    waiters: new Map(pairs(waiters as string[])),
    tag,
    handed: handed as Record<string, string>,
    metaLimit,
    metaSeq,
    metaDue,
    metaCounts: { nheld: meta.nheld, nwant: meta.nwant, nboth: meta.nboth },
    hasState: Object.keys(stateHash as Record<string, string>).length > 0,
    holders: holders as string[],
    fence: fence as string | null,
    expireAt: Object.fromEntries(NAMES.map((name, i) => [name, out[6 + i] as number])) as Record<
      Name,
      number
    >,
  };
}

/** The state hash's fields by kind: the first character names it (_lease_script.ts, KEYS 3). */
export function splitState(hash: Record<string, string>): {
  held: Record<string, string>;
  want: Record<string, string>;
  tag: Record<string, string>;
  handed: Record<string, string>;
  meta: Record<string, string>;
} {
  const split = { held: {}, want: {}, tag: {}, handed: {}, meta: {} } as Record<
    "held" | "want" | "tag" | "handed" | "meta",
    Record<string, string>
  >;
  const kinds = { h: "held", w: "want", t: "tag", d: "handed", "#": "meta" } as const;
  for (const [field, value] of Object.entries(hash)) {
    const kind = kinds[field[0] as keyof typeof kinds];
    if (kind === undefined) throw new Error(`unknown state field ${JSON.stringify(field)}`);
    split[kind][field.slice(1)] = value;
  }
  return split;
}

function sorted<T>(record: Record<string, T>): [string, T][] {
  return Object.entries(record).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
}

/** Every invariant of one key, after a call (`what` names it in a failure). */
export function checkState(model: StoreModel, state: StoreState, what: string): void {
  const at = (check: string) => `${what}: ${check}`;
  assert(state.leases.size <= model.limit, at(`${state.leases.size} leases over ${model.limit}`));
  // The leases are exactly the model's, each with its holder.
  assertEquals(
    [...state.leases].map(([fence, { holder }]) => [fence, holder]).sort(),
    [...model.leases].map(([fence, { holder }]) => [fence, holder]).sort(),
    at("leases"),
  );
  // Live ones have a deadline ahead; lapsed ones (not yet reclaimed) one behind.
  for (const [fence, { deadline }] of state.leases) {
    const lapsed = model.leases.get(fence)!.lapsed;
    assert(deadline > state.nowMs !== lapsed, at(`lease ${fence} deadline, lapsed ${lapsed}`));
  }
  // The held counts are the leases counted per holder, and sum to ZCARD.
  const counts: Record<string, string> = {};
  for (const { holder } of model.leases.values()) {
    counts[holder] = String(Number(counts[holder] ?? 0) + 1);
  }
  assertEquals(sorted(state.held), sorted(counts), at("held counts"));
  const sum = Object.values(state.held).reduce((total, n) => total + Number(n), 0);
  assertEquals(sum, state.leases.size, at("held counts sum to the leases"));
  // Wait records: who waits, for how many, with which tag, until when.
  const wants: Record<string, string> = {};
  const tags: Record<string, string> = {};
  for (const [holder, wait] of model.waits) {
    wants[holder] = String(wait.want);
    tags[holder] = String(wait.tag);
  }
  assertEquals(sorted(state.want), sorted(wants), at("want"));
  assertEquals(sorted(state.tag), sorted(tags), at("tags"));
  assertEquals([...state.waiters.keys()].sort(), Object.keys(wants).sort(), at("waiters"));
  for (const [holder, expiry] of state.waiters) {
    const lapsed = model.waits.get(holder)!.lapsed;
    assert(expiry > state.nowMs !== lapsed, at(`wait record of ${holder}, lapsed ${lapsed}`));
  }
  const handed: Record<string, string> = {};
  for (const [holder, list] of model.handed) handed[holder] = list.join(",");
  assertEquals(sorted(state.handed), sorted(handed), at("handed"));
  // S8: the counter is the last fence handed out, and never expires.
  if (model.maxFence > 0) {
    assertEquals(Number(state.fence), model.maxFence, at("fence counter"));
    assertEquals(state.expireAt.fence, -1, at("the fence counter expires"));
  }
  checkExpiry(model, state, at);
  checkDue(state, at);
  checkCounts(state, at);
}

// The counts a call reads instead of every holder's fields: exact, whenever
// the hash exists; the holders set names exactly the holders with a field.
function checkCounts(state: StoreState, at: (check: string) => string): void {
  assertEquals(state.holders.sort(), Object.keys(state.held).sort(), at("the holders set"));
  if (!state.hasState) return;
  const both = Object.keys(state.held).filter((holder) => holder in state.want).length;
  assertEquals(state.metaCounts, {
    nheld: String(Object.keys(state.held).length),
    nwant: String(Object.keys(state.want).length),
    nboth: String(both),
  }, at("meta's counts"));
}

// The script looks for lapsed leases and wait records only once meta's 'due'
// has come: a due after a deadline in them would leave it unreclaimed late.
function checkDue(state: StoreState, at: (check: string) => string): void {
  if (state.metaDue === null) return;
  const due = Number(state.metaDue);
  const first = Math.min(
    ...[...state.leases.values()].map((l) => l.deadline),
    ...state.waiters.values(),
  );
  assert(due <= first, at(`meta's due ${due} after the first deadline, ${first}`));
}

// Nothing stays behind: with nothing live every key but the counter is gone;
// otherwise each one left expires, and not before the last deadline in them.
function checkExpiry(model: StoreModel, state: StoreState, at: (check: string) => string): void {
  const kept = NAMES.filter((name) => name !== "fence");
  if (model.leases.size === 0 && model.waits.size === 0) {
    for (const name of kept) assertEquals(state.expireAt[name], -2, at(`${name} left behind`));
    return;
  }
  assertEquals(state.metaLimit, String(model.limit), at("the limit kept for S7"));
  const last = Math.max(
    ...[...state.leases.values()].map((l) => l.deadline),
    ...state.waiters.values(),
  );
  for (const name of kept) {
    const expireAt = state.expireAt[name];
    if (expireAt === -2) continue;
    assert(expireAt !== -1, at(`${name} never expires`));
    assert(expireAt >= last, at(`${name} expires at ${expireAt}, before a deadline at ${last}`));
  }
}
