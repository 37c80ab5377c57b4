// A forkAll item's script in its batch's lane (`ScriptLane`, _guard.ts). The
// script runs in a promise job of its own, registered in the lane's context,
// so whatever it does to the async context (`enterWith`) ends with that job.
// Its outcome is heard in a reaction registered after it, so in whatever
// context the script left: the bookkeeping there marks itself as procpool's
// own and starts no script itself (forkAll resumes through a reaction it
// registered clean), and what may reach user code goes back to the lane's
// own context first (ScriptLane.outside).
import type { ProcessProbe, ScriptCall } from "../runtime/_hooks.ts";
import { callScript, whenSettled } from "./_guard.ts";
import type { ItemRecord } from "./_records.ts";

// deno-lint-ignore no-explicit-any
type ItemScript = (...args: any[]) => unknown;

/**
 * Runs `record`'s script, `fn(item, lang)`, now. The caller is a promise job
 * of the item's own, registered in the lane's context, and runs nothing after it.
 */
export function invokeInLane(record: ItemRecord, fn: ItemScript, item: unknown): void {
  // Bound functions: smaller than two closures over the record.
  const probe = record.probe;
  if (probe === undefined) {
    record.lane!.start(
      fn,
      item,
      record.lang,
      returnedInLane.bind(record),
      threwInLane.bind(record),
    );
    return;
  }
  // An instrument's probe is user code (a tracer, a context manager): it runs
  // outside the lane, in the lane's own context, so that it neither runs as
  // the script nor as procpool's own code, and nothing it schedules inherits
  // the lane. The script is then marked by its record, as outside a lane.
  record.lane!.outside(() => enterProbe(record, probe, fn, item));
}

function enterProbe(record: ItemRecord, probe: ProcessProbe, fn: ItemScript, item: unknown): void {
  let result: unknown;
  try {
    // Adopted under the script's mark (callScript): the built-in then below
    // runs nothing of the script's, only what the instrument returned.
    result = probe.enter(callScript as ScriptCall, record, fn, item, true);
  } catch (error) {
    result = Promise.reject(error);
  }
  whenSettled(result, returnedInLane.bind(record), threwInLane.bind(record));
}

function returnedInLane(this: ItemRecord, value: unknown): void {
  stopInLane(this, true, value);
}

function threwInLane(this: ItemRecord, error: unknown): void {
  stopInLane(this, false, error);
}

/**
 * A success is only bookkeeping, which may run in the lane. A failure can
 * reach user code (failFast aborts the scope's signal, whose listeners run
 * synchronously), as can debug logging: those leave the lane, so nothing the
 * user code schedules inherits it.
 */
function stopInLane(record: ItemRecord, returned: boolean, outcome: unknown): void {
  if (returned && !record.logsDebug) record.lane!.internal(stopReturned, record, outcome);
  else stopOutside(record, returned, outcome);
}

// Apart from stopInLane, whose every call would otherwise allocate the
// context this closure captures.
function stopOutside(record: ItemRecord, returned: boolean, outcome: unknown): void {
  record.lane!.outside(() => record.stop(returned, outcome));
}

function stopReturned(record: ItemRecord, value: unknown): void {
  record.returned(value);
}
