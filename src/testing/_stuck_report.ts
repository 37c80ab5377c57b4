// What a stuck program waits for: one line per live process and per body
// waiting for a result or a slot, for StuckError's message.
import type { Scope } from "../app/scope.ts";
import type { ProcessRecord } from "../app/process.ts";
import { holderLabel, lockWaitsOf } from "../lang/_lock_graph.ts";
import { processLabel } from "../errors/_process_label.ts";
import type { PoolStats } from "../runtime/options.ts";

/** A root scope, and whether its body has settled. */
export interface StuckApp {
  readonly scope: Scope;
  bodyDone: boolean;
}

function label(record: ProcessRecord): string {
  return processLabel(record.id, record.name);
}

function processWaits(record: ProcessRecord): string {
  const locks = lockWaitsOf(record.lang);
  if (locks.length === 0) {
    return `${label(record)}: waits for nothing procpool knows of ` +
      "(a promise only code outside the runtime could settle?)";
  }
  const each = locks.map((lock) =>
    `SharedVar ${lock.id}'s lock, held by ${
      lock.holder === undefined ? "nobody" : holderLabel(lock.holder)
    }`
  );
  return `${label(record)}: waits for ${each.join(" and ")}`;
}

/** The lines for StuckError: processes first, then bodies, then slots. */
export function stuckReport(apps: Iterable<StuckApp>, stats: PoolStats): string[] {
  const processes: string[] = [];
  const bodies: string[] = [];
  const live: string[] = [];
  const visit = (scope: Scope, who: string, bodyDone: boolean | undefined) => {
    for (const record of scope.runningProcesses()) {
      processes.push(processWaits(record));
      live.push(label(record));
    }
    let waits = 0;
    for (const wait of scope.resultWaits) {
      bodies.push(`${who}: waits for the result of ${label(wait.record)}`);
      waits++;
    }
    if (bodyDone === false && waits === 0) {
      bodies.push(
        `${who}: waits for no process result (for a slot? an evalLang script? a promise from outside?)`,
      );
    }
    for (const child of scope.childScopes()) visit(child, "a nested scope's body", undefined);
  };
  for (const app of apps) visit(app.scope, "runApp's body", app.bodyDone);
  if (stats.waiting > 0) {
    const forks = stats.waiting === 1 ? "1 fork waits" : `${stats.waiting} forks wait`;
    bodies.push(
      `${forks} for a slot; all ${stats.max} are held by ${
        live.length > 0 ? live.join(", ") : "processes of other apps"
      }`,
    );
  }
  return [...processes, ...bodies];
}
