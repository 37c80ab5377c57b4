// The error for a lock wait on shared variables that would close a cycle.

/**
 * A wait for a shared variable's lock would have closed a cycle: the waiting
 * process holds a variable that the holder of the one it wants waits for,
 * directly or through other processes. The wait is refused at once with this
 * error, in the process whose wait closed the cycle; the others proceed.
 * `cycle` lists each process of the cycle with the variable it waits for,
 * starting with the refused wait.
 *
 * @example Two processes locking two variables in opposite orders
 * ```ts
 * import { DeadlockError, Runtime } from "@procpool/procpool";
 * await using runtime = new Runtime({ maxProcesses: 2 });
 * const outcomes = await runtime.runApp(async (app) => {
 *   const [a, b] = [app.newVar(0), app.newVar(0)];
 *   const transfer = (from: typeof a, to: typeof a) =>
 *     app.forkProcess((lang) =>
 *       lang.modifyVar(from, async (x) => {
 *         await lang.delay(10); // both now hold their first variable
 *         await lang.modifyVar(to, (y) => y + 1);
 *         return x - 1;
 *       })
 *     );
 *   const handles = [await transfer(a, b), await transfer(b, a)];
 *   return await Promise.allSettled(handles.map((h) => app.awaitResult(h)));
 * });
 * const refused = outcomes.find((o) => o.status === "rejected");
 * console.assert(refused?.reason.cause instanceof DeadlockError);
 * console.assert(outcomes.filter((o) => o.status === "fulfilled").length === 1);
 * ```
 */
export class DeadlockError extends Error {
  /** The cycle: each process (0 for an evalLang script) and the variable it waits for. */
  readonly cycle: readonly { readonly processId: number; readonly varId: number }[];
  /** Creates the error for `cycle`, starting with the refused wait. */
  constructor(
    message: string,
    cycle: readonly { readonly processId: number; readonly varId: number }[] = [],
  ) {
    super(message);
    this.name = "DeadlockError";
    this.cycle = cycle;
  }
}
