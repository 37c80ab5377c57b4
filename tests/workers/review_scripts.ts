import type { LangL, SharedVar } from "../../mod.ts";
/** Logs one object twice, changed between the two logs. */
export function mutateBetweenLogs(_: unknown, lang: LangL): number {
  const p = { n: 1 };
  lang.logInfo("first", { p });
  p.n = 2;
  lang.logInfo("second", { p });
  return 0;
}
/** Logs an object, then changes it. */
export function mutateAfterLog(_: unknown, lang: LangL): number {
  const p = { n: 1 };
  lang.logInfo("first", { p });
  p.n = 2;
  return 0;
}
/** Counts with the variable held by an array's named property. */
export async function namedCounter(
  input: unknown[] & { counter: SharedVar<number> },
  lang: LangL,
): Promise<number> {
  await lang.modifyVar(input.counter, (c) => c + 1);
  return await lang.readVar(input.counter);
}
/** Logs a plain object that looks like a variable reference. */
export function forgedRef(_: unknown, lang: LangL): number {
  lang.logInfo("forged", { x: { __procpoolSharedVar: 5 } });
  return 7;
}
class Holder {
  constructor(readonly inner: object) {}
}
let sharedReads = 0;
/** An object with a getter, held by the result directly and through a class instance. */
export function sharedThroughInstance(): unknown {
  sharedReads = 0;
  const inner = Object.defineProperty({}, "g", { get: () => ++sharedReads, enumerable: true });
  return { inner, holder: new Holder(inner) };
}
export function sharedReadsSoFar(): number {
  return sharedReads;
}

/** Whether its input's index 1 is a hole, and an array with a hole at 1 beside a variable. */
export function holeAt1(input: [SharedVar<number>, unknown, number]): unknown {
  // deno-lint-ignore no-sparse-arrays
  return { inputHas1: 1 in input, back: [input[0], , 3] };
}

/**
 * Creates a variable whose initial value cannot be cloned and writes it in the
 * same synchronous stretch (one batch: the newVar, then the write's op).
 */
export async function newVarUncloneable(_: unknown, lang: LangL): Promise<unknown> {
  const v = lang.newVar<unknown>(() => 1);
  const written = lang.writeVar(v, 2);
  await written;
  return await lang.readVar(v);
}

/**
 * Whether its input (an object holding itself, then a variable) still holds
 * itself and its variable, and the same shape back: a cycle met before the
 * variable.
 */
export async function cycleBeforeVar(
  input: { self: unknown; v: SharedVar<number> },
  lang: LangL,
): Promise<unknown> {
  const inputKept = input.self === input && await lang.readVar(input.v) === 5;
  const o: Record<string, unknown> = { inputKept };
  o.self = o;
  o.v = input.v;
  return o;
}
