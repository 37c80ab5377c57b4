// A message the channel refuses is replaced in its own place in the order,
// not after the rest of its batch: a later message may depend on it (a worker
// script's newVar, written in the same stretch, was taken by the runtime for a
// forged variable reference, because the write's op arrived before the
// variable's replacement newVar).
import { assertEquals } from "@std/assert";
import { createTestRuntime } from "../testing.ts";
import { Outbox } from "../src/worker/_outbox.ts";

const scripts = new URL("./workers/review_scripts.ts", import.meta.url);

Deno.test("Outbox: what replaces a refused message goes in its place", () => {
  const posted: string[] = [];
  const outbox: Outbox<string> = new Outbox<string>(
    (messages) => {
      if (messages.includes("bad")) throw new TypeError("could not be cloned");
      posted.push(...messages);
    },
    () => outbox.push("instead"),
  );
  outbox.push("a");
  outbox.push("bad");
  outbox.push("c");
  outbox.flush();
  assertEquals(posted, ["a", "instead", "c"]);
});

for (const isolation of ["thread", "process"] as const) {
  Deno.test(`forkWorker (${isolation}): a variable created with an uncloneable value can be written at once`, async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, workers: 1 });
    const out = await runtime.runApp(async (app) =>
      await app.awaitResult(
        await app.forkWorker(scripts, null, { export: "newVarUncloneable", isolation }),
      )
    );
    assertEquals(out, 2);
    assertEquals(
      runtime.logs.map((entry) => entry.message),
      ["newVar: the initial value could not be sent to the runtime"],
    );
  });
}
