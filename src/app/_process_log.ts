// A process's "forked" debug record, logged outside any script's context.
// A function of its own rather than a closure in ProcessRecord.begin, whose
// every call would otherwise allocate the context that closure captures (56
// bytes a process, debug logging or not).
import { outsideScripts } from "./_guard.ts";
import type { ProcessRecord } from "./process.ts";

export function logForked(record: ProcessRecord): void {
  outsideScripts(() =>
    record.core.logger.debug("forked process {processId}", {
      processId: record.id,
      name: record.name,
    })
  );
}
