// Which LangL call a worker's operation is, for the runtime's side of a run
// (remote_run.ts): the worker names an operation and its arguments, the run's
// own LangL object carries it out here, so locks, cancellation and virtual
// time behave as for a script running on the runtime's thread. Functions the
// worker holds (a modifyVar or atomically body) run there, asked by `call`.
import type { LangInterpreter } from "../lang/interpreter.ts";
import type { Transaction } from "../lang/lang.ts";
import type { VarCell } from "../lang/shared_var.ts";
import type { VarRefs } from "./_var_refs.ts";

/** What an operation needs of its run. */
export interface OperationRun {
  readonly lang: LangInterpreter;
  readonly refs: VarRefs;
  /** Asks the worker to run the function of operation `id` on `value`. */
  call(id: number, value: unknown): Promise<unknown>;
  /** Runs the worker's `evalIO` body of operation `id`; settles when it ended there. */
  io(id: number, signal: AbortSignal): Promise<unknown>;
}

/** Starts operation `id`; throws (synchronously) on an unknown operation or a bad reference. */
export function startOperation(
  run: OperationRun,
  id: number,
  op: string,
  a: unknown,
  b: unknown,
): Promise<unknown> {
  const { lang, refs } = run;
  switch (op) {
    case "delay":
      return lang.delay(a as number);
    case "readVar":
      return lang.readVar(refs.cell(a)).then((value) => refs.encode(value));
    case "writeVar":
      return lang.writeVar(refs.cell(a), refs.decode(b));
    case "modifyVar":
      return lang.modifyVar(
        refs.cell(a),
        (value) => run.call(id, refs.encode(value)).then((next) => refs.decode(next)),
      ).then(() => undefined);
    case "atomically": {
      const cells = (a as number[]).map((varId) => refs.cell(varId));
      return lang.atomically(cells, (tx) => transaction(run, id, cells, tx));
    }
    case "evalIO":
      return (lang.evalIO as (io: unknown, options?: unknown) => Promise<unknown>)(
        (signal: AbortSignal) => run.io(id, signal),
        a,
      ).then(() => undefined);
    default:
      throw new TypeError(`unknown worker operation ${op}`);
  }
}

/** An atomically body run on the worker: the values go there, the writes come back. */
async function transaction(
  run: OperationRun,
  id: number,
  cells: VarCell<unknown>[],
  tx: Transaction,
): Promise<void> {
  const { refs } = run;
  const values = cells.map((cell) => tx.read(cell));
  const writes = await run.call(id, refs.encode(values)) as [number, unknown][];
  for (const [varId, value] of writes) tx.write(refs.cell(varId), refs.decode(value));
}
