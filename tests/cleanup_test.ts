// Cleanup after cancellation (API.md rule 13): an error a cancelled process
// throws in its cleanup is logged at warning level, and a shielded evalIO
// runs even after the cancellation, bounded by its own timeout.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { recordingLogger } from "./_recording_logger.ts";
import { createTestRuntime } from "../testing.ts";

Deno.test("an error thrown in cleanup after a cancel is logged at warning level", async (t) => {
  await t.step("a finally block that throws", async () => {
    const logger = recordingLogger();
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1, logger });
    const boom = new Error("could not close the lease");
    await runtime.runApp(async (app) => {
      const h = await app.forkProcess(async (lang) => {
        try {
          await lang.delay(1_000);
        } finally {
          // deno-lint-ignore no-unsafe-finally
          throw boom;
        }
      }, { name: "leaser" });
      h.cancel("shutting down");
      await app.awaitResult(h).catch(() => {});
      assertEquals(h.status, "cancelled");
    });
    const warnings = logger.records.filter((r) => r.level === "warning");
    assertEquals(warnings.length, 1);
    assertStrictEquals(warnings[0].properties.error, boom);
    assertEquals(warnings[0].properties.processId, 1);
    assertEquals(warnings[0].properties.name, "leaser");
    assertEquals(runtime.stats().cancelled, 1);
  });

  await t.step("a process that just lets its cancellation through logs nothing", async () => {
    const logger = recordingLogger();
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1, logger });
    await runtime.runApp(async (app) => {
      const h = await app.forkProcess((lang) => lang.delay(1_000));
      h.cancel();
      await app.awaitResult(h).catch(() => {});
    });
    assertEquals(logger.records.filter((r) => r.level !== "debug"), []);
  });

  await t.step("a logger that throws does not break the stop", async () => {
    const logger = recordingLogger();
    logger.warn = () => {
      throw new Error("sink down");
    };
    await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1, logger });
    await runtime.runApp(async (app) => {
      const h = await app.forkProcess(async (lang) => {
        await lang.delay(1_000).catch(() => {});
        throw new Error("cleanup failed");
      });
      h.cancel();
      await app.awaitResult(h).catch(() => {});
      assertEquals(h.status, "cancelled");
    });
    assertEquals(runtime.stats().active, 0);
  });
});
