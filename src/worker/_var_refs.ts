// The SharedVars a worker process was given, by id. A variable crosses to the
// worker as a reference ({ [VAR_REF]: id }); only a variable sent to the
// worker this way can come back from it, so a worker cannot reach others.
import { VarCell } from "../lang/shared_var.ts";
import { VAR_REF, varRefId } from "./protocol.ts";
import { replaceDeep } from "./_replace_deep.ts";
import { copyDeep } from "./_copy_deep.ts";

export class VarRefs {
  readonly #cells = new Map<number, VarCell<unknown>>();

  /** A variable the worker created (`newVar`), under the id the worker chose. */
  add(id: number, cell: VarCell<unknown>): void {
    this.#cells.set(id, cell);
  }

  /** The variable with `id`, which must have been sent to the worker. */
  cell(id: unknown): VarCell<unknown> {
    const cell = this.#cells.get(id as number);
    if (cell === undefined) {
      throw new TypeError(
        `the worker sent a reference to SharedVar ${id}, which was not given to it: ` +
          `a plain object with the key "${VAR_REF}" is taken for a shared variable ` +
          `(the key is reserved in what a worker sends)`,
      );
    }
    return cell;
  }

  /** `value` as sent to the worker (a copy, each property read once): each variable in it becomes a reference. */
  encode(value: unknown): unknown {
    return copyDeep(value, (v) => {
      if (!(v instanceof VarCell)) return undefined;
      this.#cells.set(v.id, v);
      return { [VAR_REF]: v.id };
    });
  }

  /** `value` as received from the worker: each reference becomes its variable. */
  decode(value: unknown): unknown {
    return replaceDeep(value, (v) => {
      const id = varRefId(v);
      return id === undefined ? undefined : this.cell(id);
    });
  }
}
