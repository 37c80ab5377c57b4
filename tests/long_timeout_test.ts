// The system clock's long timeouts: setTimeout holds at most 2^31 - 1 ms, so
// a longer delay is chained from the monotonic clock. Checked on a fake timer
// host (no real waiting): it fires once, at the deadline, never early.
import { assertEquals } from "@std/assert";
import { LongTimeout, MAX_TIMEOUT_MS, type TimerHost } from "../src/runtime/_long_timeout.ts";

/** A fake host: timers fire only when `advance` moves time past them. */
class FakeHost implements TimerHost {
  time = 0;
  readonly armed: number[] = []; // the delays asked of setTimeout
  #timers = new Map<number, { at: number; callback: () => void }>();
  #nextId = 1;

  setTimeout(callback: () => void, ms: number): number {
    this.armed.push(ms);
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.time + ms, callback });
    return id;
  }

  clearTimeout(id: unknown): void {
    this.#timers.delete(id as number);
  }

  now(): number {
    return this.time;
  }

  get live(): number {
    return this.#timers.size;
  }

  /** Moves time to `to`, firing due timers in deadline order. */
  advance(to: number): void {
    for (;;) {
      const due = [...this.#timers].filter(([, t]) => t.at <= to).sort((a, b) => a[1].at - b[1].at);
      if (due.length === 0) break;
      const [id, timer] = due[0];
      this.#timers.delete(id);
      this.time = timer.at;
      timer.callback();
    }
    this.time = to;
  }
}

const DAY = 24 * 60 * 60 * 1000;

Deno.test("a long timeout is chained and fires once, at its deadline", async (t) => {
  for (const ms of [MAX_TIMEOUT_MS + 1, 30 * DAY, 2 ** 53, 1e300]) {
    await t.step(`${ms} ms`, () => {
      const host = new FakeHost();
      let fired: number[] = [];
      new LongTimeout(ms, () => fired.push(host.now()), host);
      assertEquals(host.armed[0], MAX_TIMEOUT_MS, "no single setTimeout above 2^31 - 1");
      host.advance(Math.min(ms - 1, 1e3 * MAX_TIMEOUT_MS));
      assertEquals(fired, [], "not early");
      if (ms > 1e3 * MAX_TIMEOUT_MS) return; // would take too many links to reach
      host.advance(ms + MAX_TIMEOUT_MS);
      assertEquals(fired, [ms]);
      assertEquals(host.live, 0, "no timer left behind");
      assertEquals(host.armed.every((d) => d > 0 && d <= MAX_TIMEOUT_MS), true);
      fired = [];
    });
  }
  await t.step("a host that fires early makes it re-arm, not fire", () => {
    const host = new FakeHost();
    let fired = false;
    new LongTimeout(MAX_TIMEOUT_MS + 10, () => fired = true, host);
    host.advance(MAX_TIMEOUT_MS); // the first link fires 10 ms before the deadline
    assertEquals([fired, host.armed.at(-1)], [false, 10]);
    host.advance(MAX_TIMEOUT_MS + 10);
    assertEquals(fired, true);
  });
  await t.step("cancel stops it in any link", () => {
    const host = new FakeHost();
    let fired = false;
    const timeout = new LongTimeout(3 * MAX_TIMEOUT_MS, () => fired = true, host);
    host.advance(MAX_TIMEOUT_MS + 5);
    timeout.cancel();
    host.advance(10 * MAX_TIMEOUT_MS);
    assertEquals([fired, host.live], [false, 0]);
  });
});
