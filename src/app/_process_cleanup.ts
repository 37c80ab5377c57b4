// What a cancelled process's cleanup threw: reported, never dropped, and
// never allowed to break the bookkeeping of the stop.
import { logSafely } from "../runtime/_safe_log.ts";
import type { ProcessRecord } from "./process.ts";

/**
 * The process was cancelled, then threw something other than its
 * cancellation (its cleanup failed). It still ends `cancelled`, but the
 * error is not dropped.
 */
export function warnCleanupError(record: ProcessRecord, error: unknown): void {
  logSafely(
    record.core.logger,
    "warn",
    "process {processId} was cancelled and then threw (in its cleanup): {error}",
    { processId: record.id, name: record.name, error, reason: record.error },
  );
}
