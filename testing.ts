/**
 * The test interpreter for procpool: swap `new Runtime(...)` for
 * `createTestRuntime(...)` and the same domain code runs in virtual time,
 * deterministically, with its logs and every LangL operation recorded.
 *
 * @example
 * ```ts
 * import { createTestRuntime } from "@procpool/procpool/testing";
 *
 * await using runtime = createTestRuntime({ maxProcesses: 3, seed: 42 });
 * const rolls = await runtime.runApp((app) =>
 *   app.forkAll([1, 2, 3], async (_, lang) => {
 *     await lang.delay(60 * 60 * 1000); // a virtual hour, in no real time
 *     return lang.getRandomInt(1, 6);
 *   })
 * );
 * console.assert(rolls.length === 3 && runtime.clock.now() === 3_600_000);
 * ```
 *
 * @module
 */
export { VirtualClock } from "./src/testing/virtual_clock.ts";
export {
  createTestRuntime,
  type TestRuntime,
  type TestRuntimeOptions,
} from "./src/testing/test_runtime.ts";
export { StuckError } from "./src/testing/stuck_error.ts";
export type { LogEntry, LogLevel, TraceEvent } from "./src/runtime/observer.ts";
