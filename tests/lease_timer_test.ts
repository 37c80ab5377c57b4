// The lease manager's re-armable timer (_lease_timer.ts) on virtual time: a
// timer kept from an earlier arming never fires before the time asked, nor
// after it (beyond the slack given), and nothing is left on the clock once it
// is cleared; the wake's slack (_poll_backoff.ts) never delays the wake for
// an expiry. The watch on unanswered store calls (_watched_store.ts), which
// keeps one timer for every call in flight, reports each late call once.
import { assertEquals } from "@std/assert";
import { VirtualClock } from "../testing.ts";
import { type Clock, startTimer, stopTimer } from "../src/runtime/clock.ts";
import { LeaseTimer } from "../src/runtime/shared/_lease_timer.ts";
import { PollBackoff } from "../src/runtime/shared/_poll_backoff.ts";
import { WatchedStore } from "../src/runtime/shared/_watched_store.ts";
import { FakeLeaseStore, never } from "./_fake_lease_store.ts";

function setup() {
  const clock = new VirtualClock(0);
  const fired: number[] = [];
  const timer = new LeaseTimer(clock, () => fired.push(clock.now()));
  return { clock, timer, fired };
}

Deno.test("lease timer", async (t) => {
  await t.step("armed later than the running timer: fires at the later time", async () => {
    const { clock, timer, fired } = setup();
    timer.set(100);
    await clock.advance(10);
    timer.set(300); // 310: the timer due at 100 is kept and re-arms
    await clock.advance(1_000);
    assertEquals(fired, [310]);
    assertEquals(clock.pending, 0);
  });

  await t.step("armed earlier: fires at the earlier time, once", async () => {
    const { clock, timer, fired } = setup();
    timer.set(300);
    timer.set(100);
    await clock.advance(1_000);
    assertEquals(fired, [100]);
    assertEquals(clock.pending, 0);
  });

  await t.step("a running timer within the slack serves as it is", async () => {
    const { clock, timer, fired } = setup();
    timer.set(130);
    timer.set(100, 50); // 130 is within [100, 150]
    await clock.advance(1_000);
    assertEquals(fired, [130]);
    timer.set(130);
    timer.set(100, 20); // 130 is not within [100, 120]
    await clock.advance(1_000);
    assertEquals(fired, [130, 1_100]);
  });

  await t.step("cancelled: the running timer runs out without firing", async () => {
    const { clock, timer, fired } = setup();
    timer.set(100);
    timer.cancel();
    assertEquals(timer.armed, false);
    assertEquals(clock.pending, 1);
    await clock.advance(1_000);
    assertEquals([fired, clock.pending], [[], 0]);
  });

  await t.step("re-armed after a cancel: fires at the new time", async () => {
    const { clock, timer, fired } = setup();
    timer.set(100);
    timer.cancel();
    timer.set(200);
    await clock.advance(1_000);
    assertEquals(fired, [200]);
  });

  await t.step("kept past its time by a pause: fires when the kept timer does", () => {
    // A clock whose time jumps while no timer fires, as a blocked event loop's does.
    let now = 0;
    const started: LeaseTimer[] = [];
    const clock = {
      now: () => now,
      sleep: () => never(),
      [startTimer]: (_ms: number, entry: LeaseTimer) => started.push(entry),
      [stopTimer]: () => {},
    } as unknown as Clock;
    let fired = 0;
    const timer = new LeaseTimer(clock, () => fired++);
    timer.set(100);
    timer.set(300); // the timer due at 100 is kept
    now = 1_000; // paused past both
    started.shift()!.timerFired();
    assertEquals([fired, started.length], [1, 0]);
  });

  await t.step("cleared: nothing left on the clock", () => {
    const { clock, timer } = setup();
    timer.set(100);
    timer.set(500);
    timer.clear();
    assertEquals([timer.armed, clock.pending], [false, 0]);
  });
});

Deno.test("poll backoff: the wake's slack reaches the top of its jitter range, never past the expiry wake", () => {
  const poll = new PollBackoff(100, 1_000, () => 0); // each delay at half its cap
  assertEquals(poll.next(-1), { ms: 50, slackMs: 50 }); // cap 100
  assertEquals(poll.next(120), { ms: 100, slackMs: 40 }); // cap 200; the expiry wake at 140
  assertEquals(poll.next(10), { ms: 30, slackMs: 0 }); // the expiry wake first
});

Deno.test("watched store: one timer for every call in flight; each late call reported once", async () => {
  const silent: string[] = [];
  let recovered = 0;
  const inner = new FakeLeaseStore(new VirtualClock(0), 4, 3_000);
  const store = new WatchedStore(inner, {
    silent: (operation) => silent.push(operation),
    recovered: () => recovered++,
  }, 12);
  await store.acquire("me", 1); // answered: never reported
  inner.renewOverride = () => never();
  store.renew("me", [1]);
  await new Promise((resolve) => setTimeout(resolve, 6));
  inner.releaseOverride = () => never();
  store.release("me", [1]); // sent 6 ms later: reported 6 ms after the renew
  await new Promise((resolve) => setTimeout(resolve, 9));
  assertEquals(silent[0], "renew"); // (a busy machine may have reached the release's time too)
  await new Promise((resolve) => setTimeout(resolve, 24));
  assertEquals(silent, ["renew", "release"]); // once each
  assertEquals(recovered, 1);
  store.close(); // nothing left running (the sanitizers check)
});
