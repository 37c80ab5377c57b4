// The shared-variable operations of LangL, on cells already checked by the
// interpreter: each waits for the variable's FIFO lock (refusing re-entry
// and, in VarCell.lock, a wait that would deadlock) and checks cancellation.
import { received } from "../_validate.ts";
import { type Cancellation, throwIfCancelled } from "./cancellation.ts";
import type { SharedVar, Transaction } from "./lang.ts";
import { BufferedTransaction } from "./_transaction.ts";
import { requireData, VarCell } from "./shared_var.ts";

/** `variable` as this runtime's cell, or a TypeError naming `argument`. */
export function cellOf<T>(variable: SharedVar<T>, argument: string, runtime: object): VarCell<T> {
  if (!(variable instanceof VarCell)) {
    throw new TypeError(
      `${argument} must be a SharedVar created by newVar, got ${received(variable)}`,
    );
  }
  if (variable.owner !== runtime) {
    throw new TypeError(`${argument}: SharedVar ${variable.id} belongs to another runtime`);
  }
  return variable;
}

function refuseReentry(lang: Cancellation, cell: VarCell<unknown>, op: string): void {
  if (cell.holder === lang) {
    throw new TypeError(
      `${op} on SharedVar ${cell.id}: this process already holds its lock ` +
        "(inside modifyVar's function or atomically's body); use the value or tx you have",
    );
  }
}

/** A value that became a thenable after it was stored (a mutated object) is refused, not awaited. */
function readData<T>(cell: VarCell<T>): T {
  const value = cell.value;
  requireData(`readVar: SharedVar ${cell.id}'s value`, value);
  return value;
}

export function readVar<T>(lang: Cancellation, cell: VarCell<T>): Promise<T> {
  throwIfCancelled(lang);
  if (cell.holder === undefined) return Promise.resolve(readData(cell));
  refuseReentry(lang, cell, "readVar");
  return cell.lock(lang, lang.signal).then(() => {
    try {
      return readData(cell);
    } finally {
      cell.unlock();
    }
  });
}

export function writeVar<T>(lang: Cancellation, cell: VarCell<T>, value: T): Promise<void> {
  requireData("writeVar value", value);
  throwIfCancelled(lang);
  if (cell.holder === undefined) {
    cell.value = value;
    return Promise.resolve();
  }
  refuseReentry(lang, cell, "writeVar");
  return cell.lock(lang, lang.signal).then(() => {
    cell.value = value;
    cell.unlock();
  });
}

export async function modifyVar<T>(
  lang: Cancellation,
  cell: VarCell<T>,
  f: (value: T) => T | Promise<T>,
): Promise<T> {
  throwIfCancelled(lang);
  refuseReentry(lang, cell, "modifyVar");
  if (!cell.tryLock(lang)) await cell.lock(lang, lang.signal);
  try {
    const next = await f(cell.value);
    // Like atomically: a cancelled process's change is rolled back.
    throwIfCancelled(lang);
    cell.value = next;
    return next;
  } finally {
    cell.unlock();
  }
}

export async function atomically<R>(
  lang: Cancellation,
  cells: VarCell<unknown>[],
  body: (tx: Transaction) => R | Promise<R>,
): Promise<R> {
  for (const cell of cells) refuseReentry(lang, cell, "atomically");
  throwIfCancelled(lang);
  // A single global order (by id) means two transactions can never each hold
  // what the other waits for.
  cells.sort((a, b) => a.id - b.id);
  const held: VarCell<unknown>[] = [];
  const tx = new BufferedTransaction(new Set(cells));
  try {
    for (const cell of cells) {
      if (!cell.tryLock(lang)) await cell.lock(lang, lang.signal);
      held.push(cell);
    }
    const result = await body(tx);
    throwIfCancelled(lang);
    tx.commit();
    return result;
  } finally {
    tx.close();
    for (const cell of held) cell.unlock();
  }
}
