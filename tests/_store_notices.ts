// The notices of store_invariants_test.ts: one subscription per holder on the
// key, what each must hear (the model's outbox, with each call's seq and the
// fences handed over), and the check that it heard exactly that, in order.
import { assertEquals } from "@std/assert";
import type { Redis } from "ioredis";
import type { RedisLeaseStore } from "../src/runtime/shared/redis_store.ts";
import { redisKeys } from "../src/runtime/shared/redis_store.ts";
import type { Notice, ReleaseSubscription } from "../src/runtime/shared/lease_store.ts";
import type { NoticeExpect } from "./_store_expect.ts";
import { until } from "./_redis_fixture.ts";

/** A notice's fields this test checks (a store may add more). */
function shape(notice: Notice): unknown {
  switch (notice.kind) {
    case "released":
      return { kind: "released" };
    case "wanted":
      return { kind: "wanted", holder: notice.holder, share: notice.share, seq: notice.seq };
    case "granted": {
      const { holder, fences, tag, view } = notice;
      const seen = view && { othersWaiting: view.othersWaiting, share: view.share, seq: view.seq };
      return { kind: "granted", holder, fences: [...fences], tag, view: seen };
    }
  }
}

export class NoticeLog {
  readonly #heard = new Map<string, Notice[]>();
  readonly #expected = new Map<string, unknown[]>();
  readonly #subscriptions: ReleaseSubscription[] = [];

  private constructor(readonly holders: readonly string[]) {
    for (const holder of holders) {
      this.#heard.set(holder, []);
      this.#expected.set(holder, []);
    }
  }

  /** Subscribes every holder through `store` (any store on the key). */
  static async open(store: RedisLeaseStore, holders: readonly string[]): Promise<NoticeLog> {
    const log = new NoticeLog(holders);
    for (const holder of holders) {
      const heard = log.#heard.get(holder)!;
      log.#subscriptions.push(store.subscribe((notice) => heard.push(notice), holder));
    }
    await Promise.all(log.#subscriptions.map((s) => s.ready));
    return log;
  }

  /** What the last call published: `seq` its view's number, `fences` what it handed to whom. */
  expect(outbox: readonly NoticeExpect[], seq: number, fences = new Map<string, number[]>()) {
    for (const notice of outbox) {
      if (notice.kind === "released") {
        for (const list of this.#expected.values()) list.push({ kind: "released" });
      } else if (notice.kind === "wanted") {
        const { holder, share } = notice;
        this.#expected.get(notice.to)!.push({ kind: "wanted", holder, share, seq });
      } else {
        const { to, tag, othersWaiting, share } = notice;
        this.#expected.get(to)!.push({
          kind: "granted",
          holder: to,
          fences: fences.get(to) ?? [],
          tag,
          view: { othersWaiting, share, seq },
        });
      }
    }
  }

  /**
   * Checks that each holder heard exactly what it should since the last
   * settle: a "released" published after everything else arrives last on
   * each connection (one connection delivers in publish order).
   */
  async settle(redis: Redis, key: string, what: string): Promise<void> {
    await this.#sentinel(redis, key);
    try {
      for (const holder of this.holders) {
        assertEquals(
          this.#heard.get(holder)!.map(shape),
          [...this.#expected.get(holder)!, { kind: "released" }],
          `${what}: the notices ${holder} heard`,
        );
      }
    } finally {
      this.#clear();
    }
  }

  /** Forgets everything heard and expected so far (a run that failed may leave notices on their way). */
  async reset(redis: Redis, key: string): Promise<void> {
    this.#clear();
    await this.#sentinel(redis, key);
    this.#clear();
  }

  async close(): Promise<void> {
    await Promise.all(this.#subscriptions.map((s) => s.close()));
  }

  async #sentinel(redis: Redis, key: string): Promise<void> {
    const released = (list: readonly unknown[]) =>
      list.filter((n) => (n as Notice).kind === "released").length;
    // Heard at least as many as expected, and the sentinel (in order, so it came last).
    const wanted = new Map(this.holders.map((h) => [h, released(this.#expected.get(h)!) + 1]));
    await redis.publish(redisKeys(key).channel, "sentinel");
    // A notice missing or extra shows in the comparison; this only bounds the wait.
    await until(
      () => this.holders.every((h) => released(this.#heard.get(h)!) >= wanted.get(h)!),
      2_000,
      "the sentinel",
    ).catch(() => {});
  }

  #clear(): void {
    for (const holder of this.holders) {
      this.#heard.get(holder)!.length = 0;
      this.#expected.get(holder)!.length = 0;
    }
  }
}
