// What a side sends (a worker's input, its results, log properties, the
// values of variables), copied as structured clone reads it before it is
// queued: each property read once. The batch it goes in may then cross as
// JSON or, when the JSON walk gives up after reading part of it, by structured
// clone; either way only the copy, plain data, is read again, so a getter is
// called once and the value it gave is the one that arrives.
import { isMap, isProxy, isSet } from "node:util/types";
import { hasInternals, hasInternalSlots } from "./_json_exact.ts";
import { ownIndicesFrom, SPARSE_HOLES } from "./_sparse.ts";
import { putOwn } from "./_put_own.ts";

/**
 * `value` with what `swap` recognises (variables) replaced, read as
 * structured clone reads it: as it is when nothing in it needs replacing and
 * no getter would be called (it is then read once, by structured clone), else
 * a copy made by copyAll. Deciding that calls no user code (a getter is found
 * by `__lookupGetter__`, not called), so copyAll may read it all again.
 */
export function copyDeep(value: unknown, swap: (value: object) => unknown): unknown {
  // Most inputs and results are primitives: no walk (and no set) for them.
  if (value === null || typeof value !== "object") return value;
  return needsCopy(value, swap) ? copyAll(value, swap) : value;
}

// A Map's or Set's own contents, whatever a subclass's iterator says (as structured clone reads them).
const mapEntries = Map.prototype.entries;
const setValues = Set.prototype.values;

/** The getter that reading `key` would call, if any (undefined for a data property). */
const lookupGetter = (Object.prototype as unknown as {
  __lookupGetter__(this: object, key: PropertyKey): unknown;
}).__lookupGetter__;

/** Whether copyAll must copy `value`: something in it to replace, or a getter. */
function needsCopy(value: object, swap: (value: object) => unknown): boolean {
  const seen = new Set<object>();
  const scan = (current: unknown): boolean => {
    if (current === null || typeof current !== "object" || isProxy(current)) return false;
    if (swap(current) !== undefined) return true;
    if (seen.has(current)) return false;
    seen.add(current);
    if (Array.isArray(current)) {
      // Elements only: a named property is read by structured clone, once.
      // A hole's getter is the prototype's (copyAll skips the hole).
      let holes = 0;
      for (let i = 0; i < current.length; i++) {
        // The getter first: reading the element would call it.
        if (lookupGetter.call(current, i) !== undefined) return true;
        const item = current[i];
        if (item === undefined && !Object.hasOwn(current, i) && ++holes > SPARSE_HOLES) {
          // A sparse array (a[2 ** 27] = 1): its own keys, not its length,
          // which may be near 2 ** 32 (Object.keys on a dense one would cost
          // a string per element, more than the loop).
          return scanKeys(current, i);
        }
        if (scan(item)) return true;
      }
      return false;
    }
    const proto = Object.getPrototypeOf(current);
    if (proto === Object.prototype || proto === null) {
      const record = current as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        if (lookupGetter.call(record, key) !== undefined || scan(record[key])) return true;
      }
      return false;
    }
    if (isMap(current)) {
      for (const [key, item] of mapEntries.call(current)) if (scan(key) || scan(item)) return true;
      return false;
    }
    if (isSet(current)) {
      for (const item of setValues.call(current)) if (scan(item)) return true;
    }
    return false;
  };
  /** The elements of a sparse array from index `from` on, by its own keys. */
  const scanKeys = (array: unknown[], from: number): boolean => {
    for (const index of ownIndicesFrom(array, from)) {
      if (lookupGetter.call(array, index) !== undefined || scan(array[index])) return true;
    }
    return false;
  };
  return scan(value);
}

/**
 * `value` with what `swap` recognises (variables) replaced, and its plain
 * objects, arrays, Maps and Sets copied as structured clone would read them:
 * an object's and an array's own enumerable string keys (an array's holes
 * stay holes, never read through its prototype), each read once, in order,
 * skipping one that a getter read before deleted; shared and cyclic objects
 * stay so. Anything else (a Date, a class instance, a Proxy) is left for
 * structured clone to copy or refuse.
 */
function copyAll(value: object, swap: (value: object) => unknown): unknown {
  const copies = new Map<object, unknown>();
  const walk = (current: unknown): unknown => {
    if (current === null || typeof current !== "object") return current;
    // Structured clone refuses a Proxy without calling its traps.
    if (isProxy(current)) return current;
    const swapped = swap(current);
    if (swapped !== undefined) return swapped;
    const known = copies.get(current);
    if (known !== undefined) return known;
    if (Array.isArray(current)) return copyProperties(current, []);
    const proto = Object.getPrototypeOf(current);
    if (proto === Object.prototype || proto === null) {
      const keys = Object.keys(current);
      // A Date or Map given Object.prototype is still one to structured clone.
      // An own tag (structured clone ignores symbol keys) is not read: its
      // getter would be called, and it would hide what is inside from the copy.
      if (
        Object.hasOwn(current, Symbol.toStringTag)
          ? hasInternalSlots(current)
          : hasInternals(current, keys.length === 0)
      ) return current;
      return copyProperties(current, {}, keys);
    }
    if (isMap(current)) {
      const copy = new Map<unknown, unknown>();
      copies.set(current, copy);
      for (const [key, item] of mapEntries.call(current)) copy.set(walk(key), walk(item));
      return copy;
    }
    if (isSet(current)) {
      const copy = new Set<unknown>();
      copies.set(current, copy);
      for (const item of setValues.call(current)) copy.add(walk(item));
      return copy;
    }
    return current;
  };
  const copyProperties = <T extends object>(current: object, copy: T, keys?: string[]): T => {
    copies.set(current, copy);
    const source = current as Record<string, unknown>;
    const target = copy as Record<string, unknown>;
    for (const key of keys ?? Object.keys(current)) {
      // Structured clone skips a property that a getter read before deleted.
      if (!Object.hasOwn(current, key)) continue;
      putOwn(target, key, walk(source[key]));
    }
    // Holes at the end (the array's, or a deleted element's).
    if (Array.isArray(current)) (copy as unknown[]).length = current.length;
    return copy;
  };
  return walk(value);
}
