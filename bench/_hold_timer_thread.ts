// The thread behind _hold_timer.ts. It sleeps in the kernel (Atomics.wait)
// until the earliest deadline in the shared table, or until the main thread
// adds an earlier one, then marks and wakes every hold whose deadline has
// passed.
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { CONTROL, FREE, type HoldTimerTables, SCANNING } from "./_hold_timer.ts";

self.onmessage = ({ data }: MessageEvent<HoldTimerTables>) => {
  const deadlines = new Int32Array(data.deadlines);
  const done = new Int32Array(data.done);
  const control = new Int32Array(data.control);
  // Deadlines are µs after the main thread's `base` on its performance.now() scale.
  const offsetMs = performance.timeOrigin - data.timeOrigin - data.base;
  const fired: number[] = [];
  const byDeadline = (a: number, b: number) => deadlines[a] - deadlines[b];
  const nowUs = () => Math.ceil((performance.now() + offsetMs) * 1000);
  for (;;) {
    // While it scans, the main thread must bump the sequence for any deadline it adds.
    Atomics.store(control, CONTROL.sleepingUntil, SCANNING);
    const seen = Atomics.load(control, CONTROL.sequence);
    if (Atomics.load(control, CONTROL.stop) !== 0) return self.close();
    const now = nowUs();
    let earliest = now + data.maxWaitUs;
    for (let slot = 0; slot < deadlines.length; slot++) {
      const deadline = Atomics.load(deadlines, slot);
      if (deadline === FREE) continue;
      if (deadline <= now) fired.push(slot);
      else if (deadline < earliest) earliest = deadline;
    }
    // Several at once when this thread ran late: woken in the order asked.
    for (const slot of fired.sort(byDeadline)) {
      Atomics.store(deadlines, slot, FREE);
      Atomics.store(done, slot, 1);
      Atomics.notify(done, slot);
    }
    fired.length = 0;
    Atomics.store(control, CONTROL.sleepingUntil, earliest);
    Atomics.wait(control, CONTROL.sequence, seen, (earliest - now) / 1000);
  }
};
