// The buffered view `atomically` hands its body. Nothing reaches the variables
// until `commit`, so a body that throws (or is cancelled) leaves them untouched.
import { show } from "../_validate.ts";
import type { SharedVar, Transaction } from "./lang.ts";
import { requireData, type VarCell } from "./shared_var.ts";

export class BufferedTransaction implements Transaction {
  readonly #cells: ReadonlySet<VarCell<unknown>>;
  readonly #writes = new Map<VarCell<unknown>, unknown>();
  #open = true;

  constructor(cells: ReadonlySet<VarCell<unknown>>) {
    this.#cells = cells;
  }

  read<T>(variable: SharedVar<T>): T {
    const cell = this.#member(variable, "read");
    return (this.#writes.has(cell) ? this.#writes.get(cell) : cell.value) as T;
  }

  write<T>(variable: SharedVar<T>, value: T): void {
    const cell = this.#member(variable, "write");
    requireData("tx.write value", value);
    this.#writes.set(cell, value);
  }

  commit(): void {
    for (const [cell, value] of this.#writes) cell.value = value;
  }

  close(): void {
    this.#open = false;
  }

  #member<T>(variable: SharedVar<T>, op: string): VarCell<unknown> {
    if (!this.#open) {
      throw new TypeError(`tx.${op} was called after its atomically body finished`);
    }
    const cell = variable as unknown as VarCell<unknown>;
    if (!this.#cells.has(cell)) {
      const id = typeof variable === "object" && variable !== null ? variable.id : show(variable);
      throw new TypeError(
        `tx.${op}: SharedVar ${id} is not one of the variables passed to atomically`,
      );
    }
    return cell;
  }
}
