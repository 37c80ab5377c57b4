/**
 * The error a test runtime's `runApp` rejects with when its program can make
 * no progress at all.
 *
 * @module
 */

/**
 * The program on a test runtime could make no progress: nothing was runnable,
 * no sleeper was waiting on the virtual clock and no `evalIO` was pending, for
 * about a second of real time. `runApp` then cancels its processes and
 * rejects with this error, whose message names each live process and what it
 * waits for (a variable's lock held by another process, the result of a
 * process, a slot, or nothing procpool knows of, such as a promise that only
 * code outside the runtime could settle). Processes that cannot stop keep
 * their slots; disposing the runtime still resolves.
 *
 * @example A process waiting for a promise nobody settles
 * ```ts
 * import { createTestRuntime, StuckError } from "@procpool/procpool/testing";
 * await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
 * const error = await runtime.runApp(async (app) => {
 *   const handle = await app.forkProcess(() => new Promise<void>(() => {}), { name: "waiter" });
 *   await app.awaitResult(handle);
 * }).catch((e) => e);
 * console.assert(error instanceof StuckError);
 * console.assert(error.message.includes("process 1 (waiter): waits for nothing procpool knows of"));
 * ```
 */
export class StuckError extends Error {
  /** One line per live process or body: who waits, and for what. */
  readonly waits: readonly string[];
  /** Creates the error from the lines that describe the waits. */
  constructor(waits: readonly string[], stuckForMs = 1_000) {
    super(
      `the program can make no progress: nothing was runnable, no sleeper was waiting on the ` +
        `virtual clock and no evalIO was pending for ${stuckForMs} ms of real time. Its ` +
        `processes were cancelled. What waited:\n` + waits.map((w) => `- ${w}`).join("\n"),
    );
    this.name = "StuckError";
    this.waits = waits;
  }
}
