// The "abort" part of `deno task bench:peers`: N tasks queued behind 8 busy
// slots, all with one AbortSignal, and the time from `abort()` until every
// one of them has rejected; procpool and p-queue in the same run.
import {
  fmt,
  markdownTable,
  median,
  ratio,
  runScript,
  type SpawnOptions,
  TIMED_OUT,
} from "./_shared.ts";

const GC: SpawnOptions = { v8Flags: ["--expose-gc"] };
/** p-queue's abort is quadratic; past this its runner is killed. */
const ABORT_BUDGET_MS = 60_000;
const log = (message: string) => console.error(`… ${message}`);

interface AbortResult {
  impl: string;
  n: number;
  ms: number[];
}

/**
 * Each implementation at N/10 and at N: linear work takes about 10× as long
 * for 10× the tasks, quadratic work about 100×. A run over the budget is
 * killed and reported as such.
 */
export async function abortAll(n: number): Promise<string> {
  const sizes = [Math.max(1, Math.floor(n / 10)), n];
  const rows: string[][] = [];
  for (const impl of ["procpool", "p-queue"]) {
    let smaller: number | undefined;
    for (const size of sizes) {
      log(`abort: ${impl}, N=${fmt(size)}`);
      const result = await runScript<AbortResult>(
        "abort_runner.ts",
        [impl, size],
        { ...GC, timeoutMs: ABORT_BUDGET_MS },
      );
      if (result === TIMED_OUT) {
        const over = `over ${ABORT_BUDGET_MS / 1000} s (killed)`;
        rows.push([impl, fmt(size), over, "—", "—", "—"]);
        continue;
      }
      const ms = median(result.ms);
      rows.push([
        impl,
        fmt(size),
        fmt(ms, 1),
        fmt((ms * 1000) / size, 2),
        smaller === undefined ? "—" : ratio(ms / smaller),
        result.ms.map((run) => fmt(run)).join(", "),
      ]);
      smaller = ms;
    }
  }
  return markdownTable(
    [
      "queued behind 8 slots, one signal",
      "N",
      "median ms to abort all",
      "µs per task",
      "vs N/10",
      "runs (ms)",
    ],
    rows,
  );
}
