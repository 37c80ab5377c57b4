// A worker script that logs in a loop does not starve the runtime's thread:
// its batches are bounded (MAX_BATCH messages) and a thread worker waits,
// blocked, while the runtime has not taken its last MAX_IN_FLIGHT batches;
// the runtime's ring listener lets its event loop turn. Measured: the
// lateness of a runtime timer while a worker floods (real time; the bounds
// are generous, the failures they catch were hundreds of ms to seconds).
import { assert, assertEquals } from "@std/assert";
import { Runtime, type RuntimeLogger } from "../mod.ts";
import { frame, FrameReader } from "../src/worker/_frames.ts";

const scripts = new URL("./workers/scripts.ts", import.meta.url);

/** Counts logs and drops them. */
function countingLogger(): RuntimeLogger & { count: number } {
  const logger = {
    count: 0,
    isEnabledFor: () => true,
    debug: () => logger.count++,
    info: () => logger.count++,
    warn: () => logger.count++,
    error: () => logger.count++,
  };
  return logger;
}

/** Runs `body` while a 10 ms interval timer runs; the timer's worst lateness, in ms. */
async function worstLateness(body: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 10);
    last = now;
  }, 10);
  try {
    await body();
  } finally {
    clearInterval(timer);
  }
  return Math.max(worst, performance.now() - last - 10);
}

for (const isolation of ["thread", "process"] as const) {
  for (const [script, input] of [["flood", 300], ["floodSync", 50_000]] as const) {
    Deno.test(`forkWorker (${isolation}): ${script} does not stall the runtime's timers`, async () => {
      const logger = countingLogger();
      await using runtime = new Runtime({ maxProcesses: 1, workers: 1, logger });
      const run = () =>
        runtime.runApp(async (app) =>
          app.awaitResult(
            await app.forkWorker<number, number>(scripts, input, {
              export: script,
              isolation,
            }),
          )
        );
      await run(); // a warm worker
      logger.count = 0;
      let logged = 0;
      const late = await worstLateness(async () => logged = await run());
      // The runtime's own records (a process's start and end) come too.
      assert(logger.count >= logged, `${logger.count} records for ${logged} logs`);
      assert(late < 100, `a 10 ms timer fired ${late.toFixed(0)} ms late (${logged} logs)`);
    });
  }
}

Deno.test("FrameReader cuts frames back out of chunks cut anywhere", () => {
  const payloads = [0, 1, 3, 4, 5, 100, 70_000, 2, 300_000].map((n) =>
    new Uint8Array(n).map((_, i) => (i * 7 + n) & 0xff)
  );
  const stream = new Uint8Array(payloads.reduce((n, p) => n + 4 + p.length, 0));
  let at = 0;
  for (const payload of payloads) {
    stream.set(frame(payload), at);
    at += 4 + payload.length;
  }
  for (const size of [3, 4, 7, 1000, 65_536, stream.length]) {
    const got: Uint8Array[] = [];
    const reader = new FrameReader((payload) => got.push(payload.slice()));
    for (let i = 0; i < stream.length; i += size) reader.push(stream.slice(i, i + size));
    assertEquals(got, payloads, `chunks of ${size}`);
  }
});
