// What a side receives (a worker's input, its results, log properties, the
// values of variables), with each variable reference replaced by its
// variable: the receiving side's counterpart of copyDeep.
import { forEachOwnIndex } from "./_sparse.ts";
import { putOwn } from "./_put_own.ts";

/** A plain object, as structured clone makes them (or with a null prototype). */
function isPlain(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Replaces what `swap` recognises (variables) inside plain objects, arrays
 * (their elements: a named property is not looked into), Maps and Sets; any
 * other object is left for structured clone to copy or refuse. A container is
 * copied only if a replacement can be reached from it, so a value with
 * nothing to replace is returned itself; the copies are made each before what
 * it holds, so cycles and shared objects stay so (deciding as the walk went
 * left a cycle back to a container still being walked on the received
 * original, whose references were never replaced). An array's holes stay
 * holes and its named properties come along.
 */
export function replaceDeep(value: unknown, swap: (value: object) => unknown): unknown {
  // Most inputs and results are primitives: no walk (and no map) for them.
  if (value === null || typeof value !== "object") return value;
  // Every container met, with the containers that hold it; and those from
  // which a replacement can be reached (found from the replacements up).
  const holders = new Map<object, object[]>();
  const reaches = new Set<object>();
  const mark = (container: object): void => {
    const stack = [container];
    while (stack.length > 0) {
      const next = stack.pop()!;
      if (reaches.has(next)) continue;
      reaches.add(next);
      for (const holder of holders.get(next)!) stack.push(holder);
    }
  };
  const scan = (current: unknown, holder: object | undefined): void => {
    if (current === null || typeof current !== "object") return;
    if (swap(current) !== undefined) {
      if (holder !== undefined) mark(holder);
      return;
    }
    const known = holders.get(current);
    if (known !== undefined) {
      if (holder === undefined) return;
      known.push(holder);
      if (reaches.has(current)) mark(holder);
      return;
    }
    if (!Array.isArray(current) && !(current instanceof Map) && !(current instanceof Set)) {
      if (!isPlain(current)) return;
    }
    holders.set(current, holder === undefined ? [] : [holder]);
    if (Array.isArray(current)) {
      forEachOwnIndex(current, (i) => scan(current[i], current));
    } else if (current instanceof Map) {
      for (const [key, item] of current) {
        scan(key, current);
        scan(item, current);
      }
    } else if (current instanceof Set) {
      for (const item of current) scan(item, current);
    } else {
      for (const key of Object.keys(current)) {
        scan((current as Record<string, unknown>)[key], current);
      }
    }
  };
  scan(value, undefined);
  const copies = new Map<object, unknown>();
  const walk = (current: unknown): unknown => {
    if (current === null || typeof current !== "object") return current;
    const swapped = swap(current);
    if (swapped !== undefined) return swapped;
    if (!reaches.has(current)) return current;
    if (copies.has(current)) return copies.get(current);
    if (Array.isArray(current)) {
      const copy: unknown[] = new Array(current.length);
      copies.set(current, copy);
      const record = current as unknown as Record<string, unknown>;
      // Its named properties as they are; its elements walked (holes kept).
      for (const key of Object.keys(current)) putOwn(copy as never, key, record[key]);
      forEachOwnIndex(current, (i) => copy[i] = walk(current[i]));
      return copy;
    }
    if (current instanceof Map) {
      const copy = new Map<unknown, unknown>();
      copies.set(current, copy);
      for (const [key, item] of current) copy.set(walk(key), walk(item));
      return copy;
    }
    if (current instanceof Set) {
      const copy = new Set<unknown>();
      copies.set(current, copy);
      for (const item of current) copy.add(walk(item));
      return copy;
    }
    const record = current as Record<string, unknown>;
    const copy: Record<string, unknown> = {};
    copies.set(current, copy);
    for (const key of Object.keys(record)) putOwn(copy, key, walk(record[key]));
    return copy;
  };
  return walk(value);
}
