// One store call at a time against both the lease store on Redis and its
// model (_store_model.ts): each checks the reply against the model's
// prediction, brings the model up to date, then checks every invariant of the
// key in Redis itself (_store_probe.ts), and the deadlines the call wrote
// against Redis's clock read just before and just after it.
// store_invariants_test.ts drives them.
import { assert, assertEquals } from "@std/assert";
import type { Redis } from "ioredis";
import type { RedisLeaseStore } from "../src/runtime/shared/redis_store.ts";
import type { FleetView } from "../src/runtime/shared/lease_store.ts";
import type { StoreModel } from "./_store_model.ts";
import type { ViewExpect } from "./_store_expect.ts";
import { checkState, readState, type StoreState } from "./_store_probe.ts";
import type { NoticeLog } from "./_store_notices.ts";

export interface Real {
  readonly redis: Redis;
  readonly key: string;
  /** The store as each holder uses it: the key's limit, its own leaseMs (leaseMsOf). */
  readonly stores: ReadonlyMap<string, RedisLeaseStore>;
  /** The same key with 20 ms leases: a renewal through it lets them lapse for real. */
  readonly short: RedisLeaseStore;
  /** The same key with a limit one higher (S7). */
  readonly other: RedisLeaseStore;
  readonly trace: Trace;
  readonly notices: NoticeLog;
}

/** The calls so far on one key (the last few name a failure), and the key as last read. */
export class Trace {
  readonly calls: string[] = [];
  /** The key as the last check read it: what the next call starts from. */
  last: StoreState | undefined;
  /** The number of the last view a reply carried (ShareView.seq). */
  seq = 0;
  add(call: string): string {
    this.calls.push(call);
    return this.calls.slice(-6).join(" | ");
  }
}

/** C ("<limit>/C") runs with leases 3 times as long as the others'. */
export function leaseMsOf(holder: string): number {
  return holder.endsWith("/C") ? LONGEST_MS : 10_000;
}
const LONGEST_MS = 30_000;

function storeOf(r: Real, holder: string): RedisLeaseStore {
  return r.stores.get(holder)!;
}

export async function check(m: StoreModel, r: Real, what: string): Promise<StoreState> {
  const state = await readState(r.redis, r.key);
  checkState(m, state, what);
  // The key keeps the number of its last view while anything is live (a
  // refused call, which reports none, takes one too).
  if (state.metaLimit !== null || state.metaSeq !== null) {
    assert(state.metaSeq !== null, `${what}: the key keeps no seq`);
    const seq = Number(state.metaSeq);
    assert(seq >= r.trace.seq, `${what}: the key's seq ${seq} below the last reply's`);
    r.trace.seq = seq;
  }
  return r.trace.last = state;
}

/** After a call whose reply carried `seq`: the key keeps it, unless nothing is left live. */
function checkSeqKept(state: StoreState, seq: number, what: string) {
  if (state.metaSeq !== null) assertEquals(Number(state.metaSeq), seq, `${what}: the key's seq`);
}

/** Redis's clock just before the call (the last check's read; a new key starts from now). */
async function before(r: Real): Promise<number> {
  return r.trace.last?.nowMs ?? (await readState(r.redis, r.key)).nowMs;
}

/** `deadline` was set to (now + ms) by a call made between `from` and `to` (Redis clock). */
function written(deadline: number | undefined, from: number, to: number, ms: number, what: string) {
  assert(
    deadline !== undefined && deadline >= from + ms && deadline <= to + ms,
    `${what}: deadline ${deadline} not within now + ${ms} (now in ${from}..${to})`,
  );
}

function checkView(view: FleetView, expect: ViewExpect, leases: number, what: string): void {
  assertEquals(view.othersWaiting, expect.othersWaiting, `${what}: othersWaiting`);
  assertEquals(view.share, expect.share, `${what}: share`);
  assertEquals([...view.handed ?? []], [...expect.handed], `${what}: handed`);
  if (leases === 0) assertEquals(view.earliestMs, -1, `${what}: earliestMs without leases`);
  else assert(view.earliestMs >= 1 && view.earliestMs <= LONGEST_MS, `${what}: earliestMs`);
}

/** earliestMs is the time from the call's `now` (between `from` and the read after) to the first deadline. */
function checkEarliest(earliestMs: number, state: StoreState, from: number, what: string) {
  if (state.leases.size === 0) return;
  const first = Math.min(...[...state.leases.values()].map((lease) => lease.deadline));
  const [least, most] = [Math.ceil(first - state.nowMs), Math.ceil(first - from)];
  assert(
    earliestMs >= least && earliestMs <= most,
    `${what}: earliestMs ${earliestMs}, not in ${least}..${most}`,
  );
}

/** Every call's view has a number above the last one's; its notices carry it too. */
function heard(m: StoreModel, r: Real, seq: number, what: string, fences?: Map<string, number[]>) {
  assert(seq > r.trace.seq, `${what}: seq ${seq} not above ${r.trace.seq}`);
  r.trace.seq = seq;
  r.notices.expect(m.outbox.splice(0), seq, fences);
}

function checkNewFences(m: StoreModel, fences: readonly number[], what: string): void {
  fences.forEach((fence, i) => {
    const previous = i === 0 ? m.maxFence : fences[i - 1];
    assert(fence > previous, `${what}: fence ${fence} not above ${previous} (S8)`);
  });
}

/** A wait record the call wrote (or refreshed) expires leaseMs after the call. */
function checkWaitWritten(state: StoreState, from: number, h: string, ms: number, what: string) {
  if (state.waiters.has(h)) written(state.waiters.get(h), from, state.nowMs, ms, `${what}: wait`);
}

export async function acquire(m: StoreModel, r: Real, h: string, n: number): Promise<void> {
  const tag = r.trace.calls.length;
  const what = r.trace.add(`acquire(${h}, ${n})`);
  const from = await before(r);
  const expect = m.acquire(h, n, tag);
  const reply = await storeOf(r, h).acquire(h, n, tag);
  assertEquals(reply.granted.length, expect.grant, `${what}: granted`);
  checkNewFences(m, reply.granted, what);
  m.granted(h, reply.granted);
  for (const fence of reply.granted) m.knownOf(h).add(fence);
  checkView(reply, expect, m.leases.size, what);
  heard(m, r, reply.seq, what);
  const state = await check(m, r, what);
  checkSeqKept(state, reply.seq, what);
  checkEarliest(reply.earliestMs, state, from, what);
  for (const fence of reply.granted) {
    written(state.leases.get(fence)?.deadline, from, state.nowMs, leaseMsOf(h), what);
  }
  if (n > expect.grant) checkWaitWritten(state, from, h, leaseMsOf(h), what);
}

/** Renews through h's own store, or through `r.short` (then the caller checks the key later). */
export async function renew(
  m: StoreModel,
  r: Real,
  h: string,
  fences: readonly number[],
  via: RedisLeaseStore = storeOf(r, h),
) {
  const what = r.trace.add(`renew(${h}, [${fences}])${via === r.short ? " 20 ms" : ""}`);
  const from = await before(r);
  const expect = m.renew(h, fences);
  const reply = await via.renew(h, fences);
  assertEquals([...reply.lost], [...expect.lost], `${what}: lost`);
  checkView(reply, expect, m.leases.size, what);
  heard(m, r, reply.seq, what);
  if (via === r.short) return reply; // 20 ms: they may have lapsed by the time of a read
  const state = await check(m, r, what);
  checkSeqKept(state, reply.seq, what);
  checkEarliest(reply.earliestMs, state, from, what);
  for (const fence of fences.filter((fence) => !reply.lost.includes(fence))) {
    written(state.leases.get(fence)?.deadline, from, state.nowMs, via.leaseMs, what);
  }
  checkWaitWritten(state, from, h, via.leaseMs, what);
  return reply;
}

export async function release(
  m: StoreModel,
  r: Real,
  h: string,
  fences: readonly number[],
): Promise<void> {
  const what = r.trace.add(`release(${h}, [${fences}])`);
  const from = await before(r);
  const waitsBefore = r.trace.last?.waiters ?? new Map<string, number>();
  const expect = m.release(h, fences);
  const reply = await storeOf(r, h).release(h, fences);
  assertEquals(reply.released, expect.released, `${what}: released`);
  assertEquals(reply.othersWaiting, expect.othersWaiting, `${what}: othersWaiting`);
  assertEquals(reply.share, expect.share, `${what}: share`);
  assertEquals(reply.handedOver ?? 0, expect.picks.length, `${what}: handedOver`);
  // The leases handed over are the ones in Redis the model does not know yet.
  const state = await readState(r.redis, r.key);
  const fresh = [...state.leases].filter(([fence]) => !m.leases.has(fence))
    .sort(([a], [b]) => a - b);
  checkNewFences(m, fresh.map(([fence]) => fence), what);
  assertEquals(fresh.map(([, lease]) => lease.holder), [...expect.picks], `${what}: recipients`);
  // A hand-over's deadline: the releaser's leaseMs from now, but never before
  // the recipient's wait record expires (its own call's send time + its leaseMs precede that).
  for (const [fence, { holder, deadline }] of fresh) {
    const wait = waitsBefore.get(holder) ?? 0;
    const ms = leaseMsOf(h);
    assert(
      deadline >= Math.max(from + ms, wait) && deadline <= Math.max(state.nowMs + ms, wait),
      `${what}: hand-over ${fence} to ${holder}: deadline ${deadline}, wait record ${wait}`,
    );
  }
  m.handedOver(fresh.map(([fence]) => fence), expect.picks);
  const to = new Map<string, number[]>();
  for (const [fence, { holder }] of fresh) to.set(holder, [...to.get(holder) ?? [], fence]);
  heard(m, r, reply.seq, what, to);
  checkSeqKept(await check(m, r, what), reply.seq, what);
}

export async function wait(m: StoreModel, r: Real, h: string, n: number) {
  const tag = r.trace.calls.length;
  const what = r.trace.add(`wait(${h}, ${n})`);
  const from = await before(r);
  const expect = m.wait(h, n, tag);
  const reply = await storeOf(r, h).wait(h, n, tag);
  checkView(reply, expect, m.leases.size, what);
  heard(m, r, reply.seq, what);
  const state = await check(m, r, what);
  checkSeqKept(state, reply.seq, what);
  checkEarliest(reply.earliestMs, state, from, what);
  if (n > 0) checkWaitWritten(state, from, h, leaseMsOf(h), what);
  return reply;
}
