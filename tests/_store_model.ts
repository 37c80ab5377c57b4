// A reference model of one key of the lease store (lease_store.ts; API.md S4,
// S7, S8) for store_invariants_test.ts: what each call must answer, and what
// it must leave in the store, computed from the calls alone. Fence numbers are
// the store's to choose; the model learns them from replies (grants) and from
// the store itself (hand-overs), after checking where they went.
import type {
  AcquireExpect,
  NoticeExpect,
  ReleaseExpect,
  RenewExpect,
  ViewExpect,
} from "./_store_expect.ts";

export interface ModelLease {
  readonly holder: string;
  /** Its deadline has passed (the test made it so) and no call has reclaimed it yet. */
  lapsed: boolean;
}

export interface ModelWait {
  want: number;
  readonly tag: number;
  /**
   * When the record expires, as an order: a hand-over's ties go to the one
   * expiring first. The store keeps now + leaseMs; here a logical clock stands
   * for now (each run lasts far less than the leaseMs between holders differ).
   */
  readonly since: number;
  lapsed: boolean;
}

export class StoreModel {
  /** The notices the last call must have published, in publish order per holder. */
  outbox: NoticeExpect[] = [];
  readonly leases = new Map<number, ModelLease>();
  readonly waits = new Map<string, ModelWait>();
  /** The store's record of leases handed to a holder that no reply has named yet. */
  readonly handed = new Map<string, number[]>();
  /** The fences each client believes it holds (some may have been reclaimed unseen). */
  readonly known = new Map<string, Set<number>>();
  /** The highest fence the store has handed out (S8: every new one is higher). */
  maxFence = 0;
  /**
   * The share every holder was last told (in a reply, a "granted" or a
   * "wanted" notice), each also told that others wait; undefined when one may
   * have been told otherwise. While a new waiter's share equals it, the
   * "wanted" notice would change no holder's view, and is not sent.
   */
  told: number | undefined = undefined;
  #clock = 0;
  /**
   * Holders of leases an acquire grants or a release hands over, one entry a
   * lease, before their fences are known (granted, handedOver): they count as held.
   */
  #pending: readonly string[] = [];

  /** `leaseMsOf`: each holder's leaseMs, which is also how long its wait record lasts. */
  constructor(readonly limit: number, readonly leaseMsOf: (holder: string) => number) {}

  knownOf(holder: string): Set<number> {
    let set = this.known.get(holder);
    if (!set) this.known.set(holder, set = new Set());
    return set;
  }

  held(holder: string): number {
    let n = 0;
    for (const lease of this.leases.values()) if (lease.holder === holder) n++;
    return n;
  }

  /** Something a limit mismatch is judged against: a lease or a wait record, after reclaim. */
  liveAfterReclaim(): boolean {
    return [...this.leases.values(), ...this.waits.values()].some((x) => !x.lapsed);
  }

  acquire(holder: string, n: number, tag: number): AcquireExpect {
    this.#reclaim();
    const mine = this.held(holder);
    const othersWaiting = this.#othersWaiting(holder);
    let grant = Math.min(n, this.limit - this.leases.size);
    if (othersWaiting > 0) {
      grant = Math.min(grant, Math.ceil(this.limit / this.#participants(holder)) - mine);
    }
    grant = Math.max(0, grant);
    this.#pending = grant > 0 ? [holder] : [];
    const handed = this.#takeHanded(holder);
    this.#setWant(holder, n - grant, tag);
    const share = this.#share(holder);
    this.#tell(holder, othersWaiting, share);
    this.#tidy();
    return { othersWaiting, share, handed, grant };
  }

  /** Records the leases an acquire granted (the caller checked their count and order). */
  granted(holder: string, fences: readonly number[]): void {
    this.#pending = [];
    for (const fence of fences) this.#add(fence, holder);
  }

  renew(holder: string, fences: readonly number[]): RenewExpect {
    this.#reclaim();
    const othersWaiting = this.#othersWaiting(holder);
    const share = this.#share(holder);
    const handed = this.#takeHanded(holder);
    const lost = fences.filter((fence) => this.leases.get(fence)?.holder !== holder);
    const wait = this.waits.get(holder);
    if (wait) this.waits.set(holder, { ...wait, since: this.#expiry(holder) });
    this.#tell(holder, othersWaiting, share);
    this.#tidy();
    for (const fence of lost) this.knownOf(holder).delete(fence);
    return { othersWaiting, share, handed, lost };
  }

  release(holder: string, fences: readonly number[]): ReleaseExpect {
    this.#reclaim();
    let released = 0;
    for (const fence of fences) {
      if (this.leases.get(fence)?.holder === holder) {
        this.leases.delete(fence);
        released++;
      }
      this.knownOf(holder).delete(fence);
    }
    // What a holder releases is live no more: the store forgets it was handed over.
    const list = this.handed.get(holder)?.filter((fence) => !fences.includes(fence));
    if (list?.length === 0) this.handed.delete(holder);
    else if (list) this.handed.set(holder, list);
    const picks = released > 0 ? this.#handOver(holder, released) : [];
    const othersWaiting = this.#othersWaiting(holder);
    if (released > picks.length && othersWaiting > 0) {
      this.outbox.push({ kind: "released", to: "*" });
    }
    this.#pending = picks;
    const share = this.#share(holder);
    this.#tell(holder, othersWaiting, share);
    this.#tidy();
    return { released, othersWaiting, share, picks };
  }

  /** Records the leases a release handed over (the caller matched them to the picks). */
  handedOver(fences: readonly number[], picks: readonly string[]): void {
    this.#pending = [];
    fences.forEach((fence, i) => {
      this.#add(fence, picks[i]);
      const list = this.handed.get(picks[i]) ?? [];
      list.push(fence);
      this.handed.set(picks[i], list);
    });
  }

  wait(holder: string, n: number, tag: number): ViewExpect {
    this.#reclaim();
    this.#setWant(holder, n, tag);
    const othersWaiting = this.#othersWaiting(holder);
    const share = this.#share(holder);
    const handed = this.#takeHanded(holder);
    this.#tell(holder, othersWaiting, share);
    this.#tidy();
    return { othersWaiting, share, handed };
  }

  /** A call refused for a limit mismatch (S7) still reclaims first. */
  refused(): void {
    this.#reclaim();
    this.#tidy();
  }

  /** The deadlines of these leases (and of the wait record) passed; nothing has reclaimed them yet. */
  lapse(holder: string, fences: readonly number[], wait: boolean): void {
    for (const fence of fences) {
      const lease = this.leases.get(fence);
      if (lease?.holder === holder) lease.lapsed = true;
    }
    const record = this.waits.get(holder);
    if (wait && record) record.lapsed = true;
  }

  #add(fence: number, holder: string): void {
    this.leases.set(fence, { holder, lapsed: false });
    this.knownOf(holder);
    this.maxFence = Math.max(this.maxFence, fence);
  }

  // Every call starts here: expired leases and wait records go.
  #reclaim(): void {
    for (const [fence, lease] of this.leases) if (lease.lapsed) this.leases.delete(fence);
    for (const [holder, wait] of this.waits) if (wait.lapsed) this.waits.delete(holder);
  }

  #holders(): Set<string> {
    return new Set([...[...this.leases.values()].map((lease) => lease.holder), ...this.#pending]);
  }

  #takingPart(): number {
    return new Set([...this.#holders(), ...this.waits.keys()]).size;
  }

  #participants(holder: string): number {
    const part = this.#holders().has(holder) || this.waits.has(holder);
    return this.#takingPart() + (part ? 0 : 1);
  }

  #share(holder: string): number {
    return Math.floor(this.limit / this.#participants(holder));
  }

  #othersWaiting(holder: string): number {
    return [...this.waits.keys()].filter((h) => h !== holder).length;
  }

  #takeHanded(holder: string): number[] {
    const list = this.handed.get(holder) ?? [];
    this.handed.delete(holder);
    const live = list.filter((fence) => this.leases.get(fence)?.holder === holder);
    for (const fence of live) this.knownOf(holder).add(fence);
    return live;
  }

  #expiry(holder: string): number {
    return this.leaseMsOf(holder) * 1_000_000 + ++this.#clock;
  }

  // A holder that starts waiting tells those holding leases (and the share it makes).
  #setWant(holder: string, n: number, tag: number): void {
    const was = this.waits.has(holder);
    if (n > 0) this.waits.set(holder, { want: n, tag, since: this.#expiry(holder), lapsed: false });
    else this.waits.delete(holder);
    if (n <= 0 || was) return;
    const share = this.#share(holder);
    if (share === this.told) return; // every holder knows this already
    for (const to of this.#holders()) {
      if (to === holder) continue;
      this.outbox.push({ kind: "wanted", to, holder, share });
    }
    this.told = share;
  }

  /** A view sent to `holder`: it changes what holders were told if it holds after the call. */
  #tell(holder: string, othersWaiting: number, share: number): void {
    if (!this.#holders().has(holder)) return;
    if (othersWaiting === 0 || share !== this.told) this.told = undefined;
  }

  // S4 inside release: each freed lease to the waiter holding fewest (ties:
  // the oldest wait record), never above the equal share rounded up.
  #handOver(releaser: string, freed: number): string[] {
    const count = Math.min(freed, this.limit - this.leases.size);
    const cands = [...this.waits].filter(([h, w]) => h !== releaser && w.want > 0)
      .map(([h, w]) => ({ h, wait: w, n: w.want, held: this.held(h) }));
    if (count <= 0 || cands.length === 0) return [];
    const parts = this.#takingPart();
    const cap = Math.ceil(this.limit / parts);
    const picks: string[] = [];
    while (picks.length < count) {
      let best: typeof cands[number] | undefined;
      for (const c of cands) {
        if (c.n <= 0 || c.held >= cap) continue;
        if (
          !best || c.held < best.held || (c.held === best.held && c.wait.since < best.wait.since)
        ) best = c;
      }
      if (!best) break;
      picks.push(best.h);
      best.n--;
      best.held++;
    }
    for (const c of cands) {
      if (c.n === 0) this.waits.delete(c.h);
      else c.wait.want = c.n;
    }
    // Each recipient hears the fleet just after the hand-over, as it sees it.
    for (const c of cands.filter((c) => picks.includes(c.h))) {
      const othersWaiting = this.waits.size - (this.waits.has(c.h) ? 1 : 0);
      const share = Math.floor(this.limit / parts);
      this.outbox.push({ kind: "granted", to: c.h, tag: c.wait.tag, othersWaiting, share });
      if (othersWaiting === 0 || share !== this.told) this.told = undefined;
    }
    return picks;
  }

  // With nothing live, the store deletes its keys, the record of hand-overs among them.
  #tidy(): void {
    const none = this.leases.size === 0 && this.#pending.length === 0 && this.waits.size === 0;
    if (none) {
      this.handed.clear();
      this.told = undefined;
    }
  }
}
