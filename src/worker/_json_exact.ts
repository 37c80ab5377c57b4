// Which batches JSON carries as structured clone would: the fast way across
// a worker's lane (a FrameRing) or pipe. The text is made in the same walk
// that checks the values, so that each property is read once (a second walk
// would see a getter's second answer) and a batch too large for the ring is
// given up as soon as it is (walking and stringifying a large array costs
// more than structured clone does).
import {
  isAnyArrayBuffer,
  isArgumentsObject,
  isBoxedPrimitive,
  isDate,
  isGeneratorObject,
  isMap,
  isMapIterator,
  isNativeError,
  isPromise,
  isProxy,
  isRegExp,
  isSet,
  isSetIterator,
  isWeakMap,
  isWeakSet,
} from "node:util/types";

/**
 * Deeper values go by structured clone: JSON would take them, but structured
 * clone refuses a very deep value (RangeError), and the walk is recursive.
 */
export const MAX_JSON_DEPTH = 256;

/** `"key":` for keys seen before (the protocol's, a script's usual ones): JSON.stringify per key is most of a small batch's walk. */
const keyTexts = new Map<string, string>();
const KEY_TEXTS_MAX = 1024;

/** Longer keys are not kept: the map lives as long as the process. */
const KEY_TEXT_MAX_LENGTH = 64;

function keyText(key: string): string {
  let text = keyTexts.get(key);
  if (text === undefined) {
    text = JSON.stringify(key) + ":";
    if (key.length <= KEY_TEXT_MAX_LENGTH && keyTexts.size < KEY_TEXTS_MAX) keyTexts.set(key, text);
  }
  return text;
}

const objectTag = Object.prototype.toString;

/**
 * The getter that reading `key` would call, if any (undefined for an own data
 * property): a third of what `Object.getOwnPropertyDescriptor` costs, for
 * each array element.
 */
const lookupGetter = (Object.prototype as unknown as {
  __lookupGetter__(this: object, key: PropertyKey): unknown;
}).__lookupGetter__;

/**
 * Whether an object whose prototype is Object.prototype still has a built-in
 * kind's internals (a Date or Map given that prototype by
 * `Object.setPrototypeOf`): structured clone copies or refuses those by
 * their kind, JSON would send `{}` or their indices. The tag names a Date,
 * RegExp, Error or boxed primitive by its internals, and `isView` a typed
 * array or DataView, cheaply; the other kinds (Map, Set, WeakMap, WeakSet,
 * Promise, ArrayBuffer) have no own enumerable keys of their own, and only
 * an object without any is asked about them (node:util's checks cost about
 * 50 ns each here). Such an object given keys as well is not recognised,
 * nor are kinds structured clone refuses that no check here names (a
 * WeakRef, an array iterator, an Intl object): JSON sends those as `{}`
 * (README, "How a task reaches a thread worker"). An own
 * `Symbol.toStringTag` sends the object by structured clone, which ignores
 * symbol keys: the tag would call its getter.
 */
export function hasInternals(value: object, keyless: boolean): boolean {
  if (
    Symbol.toStringTag in value || objectTag.call(value) !== "[object Object]" ||
    ArrayBuffer.isView(value)
  ) return true;
  return keyless && hasKeylessInternals(value);
}

/**
 * Whether structured clone copies `value` by its internals, told by them
 * alone: its `Symbol.toStringTag` (which may be its own, with a getter) is not
 * read.
 */
export function hasInternalSlots(value: object): boolean {
  return isDate(value) || isRegExp(value) || isNativeError(value) || ArrayBuffer.isView(value) ||
    hasKeylessInternals(value);
}

function hasKeylessInternals(value: object): boolean {
  // A Date, RegExp, Error and a typed array or DataView were named by the tag
  // or isView already; a boxed BigInt or Symbol was not (its tag is Object's).
  return isMap(value) || isSet(value) || isBoxedPrimitive(value) || isAnyArrayBuffer(value) ||
    isWeakMap(value) || isWeakSet(value) || isPromise(value) || isGeneratorObject(value) ||
    isMapIterator(value) || isSetIterator(value);
}

/** A batch as it is framed: its messages, and its sequence number if it has one. */
export interface JsonBatch {
  readonly s?: number;
  readonly now: number;
  readonly m: readonly unknown[];
}

/**
 * The batch as JSON text, if JSON carries its messages exactly and the text
 * has at most `limit` characters; undefined otherwise. A message's own
 * properties may be undefined (JSON leaves them out, and reading them gives
 * undefined again); below that only strings, booleans, null, finite numbers
 * other than -0, and plain objects (own data properties only: no getters)
 * and dense arrays of those (no Proxy, no `arguments`), each object reached
 * once (JSON would copy a shared one twice), with no undefined inside and
 * at most MAX_JSON_DEPTH deep.
 */
export function batchJson(batch: JsonBatch, limit: number = Infinity): string | undefined {
  let seen: Set<object> | undefined;
  let out = "";
  const write = (value: unknown, depth: number): boolean => {
    switch (typeof value) {
      case "string":
        // A long string is given up before it is escaped.
        if (out.length + value.length + 2 > limit) return false;
        out += JSON.stringify(value);
        return out.length <= limit;
      case "boolean":
        out += value ? "true" : "false";
        return out.length <= limit;
      case "number":
        if (!Number.isFinite(value) || Object.is(value, -0)) return false;
        // JSON writes a finite number as ToString does.
        out += value;
        return out.length <= limit;
      case "object": {
        if (value === null) {
          out += "null";
          return out.length <= limit;
        }
        if (depth > MAX_JSON_DEPTH) return false;
        // Structured clone refuses a Proxy and an arguments object; JSON would take them.
        if (isProxy(value) || isArgumentsObject(value)) return false;
        seen ??= new Set();
        if (seen.has(value)) return false;
        seen.add(value);
        if (Array.isArray(value)) {
          if (Object.getPrototypeOf(value) !== Array.prototype) return false;
          const length = value.length;
          // Each element takes at least two characters: a large array is given up unread.
          if (out.length + 2 * length + 1 > limit) return false;
          // Holes and named properties (structured clone keeps them, JSON not,
          // and reading a hole reads the prototype): the own keys must be the
          // indices alone, which come first and in order.
          const keys = Object.keys(value);
          if (keys.length !== length || (length > 0 && keys[length - 1] !== `${length - 1}`)) {
            return false;
          }
          out += "[";
          for (let i = 0; i < length; i++) {
            if (i > 0) out += ",";
            // A getter is not called (structured clone calls it).
            if (lookupGetter.call(value, i) !== undefined) return false;
            if (!write(value[i], depth + 1)) return false;
          }
          out += "]";
          return out.length <= limit;
        }
        if (Object.getPrototypeOf(value) !== Object.prototype) return false;
        out += "{";
        let first = true;
        for (const key in value) {
          // Read through the descriptor: a getter is not called (structured clone calls it).
          const property = Object.getOwnPropertyDescriptor(value, key);
          if (property === undefined || !("value" in property)) return false;
          out += first ? keyText(key) : "," + keyText(key);
          first = false;
          if (!write(property.value, depth + 1)) return false;
        }
        if (hasInternals(value, first)) return false;
        out += "}";
        return out.length <= limit;
      }
      default:
        return false;
    }
  };
  out = batch.s === undefined ? `{"now":` : `{"s":${batch.s},"now":`;
  if (!write(batch.now, 0)) return undefined;
  out += `,"m":[`;
  for (let i = 0; i < batch.m.length; i++) {
    const message = batch.m[i];
    if (typeof message !== "object" || message === null) return undefined;
    out += i > 0 ? ",{" : "{";
    let first = true;
    for (const key in message) {
      const value = (message as Record<string, unknown>)[key];
      if (value === undefined) continue;
      out += first ? keyText(key) : "," + keyText(key);
      first = false;
      if (!write(value, 1)) return undefined;
    }
    out += "}";
  }
  out += "]}";
  return out.length <= limit ? out : undefined;
}
