// A worker that sends a plain object shaped like a shared-variable reference
// ({ __procpoolSharedVar: 5 }) for a variable it was not given: only that run
// fails, with a message naming the reserved key, and the runtime goes on. It
// once crashed the runtime (thread) or hung the worker in a recursion (process).
import { assert, assertEquals, assertRejects } from "@std/assert";
import { createTestRuntime } from "../testing.ts";
import { Outbox } from "../src/worker/_outbox.ts";
import { ProcessTransport } from "../src/worker/_process_transport.ts";
import { WorkerCrashedError } from "../src/errors.ts";

const scripts = new URL("./workers/review_scripts.ts", import.meta.url);

for (const isolation of ["thread", "process"] as const) {
  Deno.test(`forkWorker (${isolation}): a forged variable reference fails only its run`, async () => {
    await using runtime = createTestRuntime({ maxProcesses: 2, workers: 1 });
    const error = await assertRejects(() =>
      runtime.runApp(async (app) =>
        await app.awaitResult(
          await app.forkWorker(scripts, 0, { export: "forgedRef", isolation }),
        )
      )
    );
    assert(String((error as Error).cause ?? error).includes("__procpoolSharedVar"), String(error));
    // The runtime and its pool still work.
    const out = await runtime.runApp(async (app) =>
      await app.awaitResult(
        await app.forkWorker(scripts, 0, { export: "mutateAfterLog", isolation }),
      )
    );
    assertEquals(out, 0);
  });
}

Deno.test("Outbox: a channel that fails for every message is not retried forever", () => {
  const broken = new Error("broken pipe");
  let posts = 0;
  const outbox = new Outbox<number>(
    () => {
      posts++;
      throw broken;
    },
    (message) => outbox.push(message + 100),
  );
  outbox.push(1);
  outbox.push(2);
  let thrown: unknown;
  try {
    outbox.flush();
  } catch (error) {
    thrown = error;
  }
  assertEquals(thrown, broken);
  // The batch, the first message, then its replacement (in its place, once):
  // that fails too, so the channel is broken, and that is thrown.
  assertEquals(posts, 3);
});

Deno.test("ProcessTransport: a batch the runtime cannot take stops the worker and says why", async () => {
  const refusal = new Error("cannot take this");
  const crashed = Promise.withResolvers<WorkerCrashedError>();
  const transport = new ProcessTransport({
    batch: () => {
      throw refusal;
    },
    crashed: (error) => crashed.resolve(error),
  });
  try {
    transport.post({
      now: 0,
      m: [{ t: "run", pid: 1, seed: 1, module: scripts.href, export: "mutateAfterLog", input: 0 }],
    });
    const error = await crashed.promise;
    assert(error instanceof WorkerCrashedError);
    assertEquals(error.cause, refusal);
  } finally {
    await transport.kill();
  }
});

Deno.test("Outbox with a batch limit: a channel that fails for every message is not retried forever", () => {
  // Review 5: the replacements `refused` pushed reached the batch limit and
  // flushed from inside the flush, which failed again: recursion until the
  // stack ran out.
  const broken = new Error("broken pipe");
  let posts = 0;
  const outbox: Outbox<number> = new Outbox<number>(
    () => {
      posts++;
      throw broken;
    },
    (message) => outbox.push(message + 100),
    2,
  );
  outbox.push(1);
  let thrown: unknown;
  try {
    outbox.push(2); // the batch limit: flushed at once
  } catch (error) {
    thrown = error;
  }
  assertEquals(thrown, broken);
  // The batch, the first message, then its replacement (in its place, once):
  // that fails too, so the channel is broken, and that is thrown.
  assertEquals(posts, 3);
});
