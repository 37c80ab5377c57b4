// Which batches JSON carries as structured clone would: the fast way across
// a worker's lane (a FrameRing) or pipe.
import { isProxy } from "node:util/types";

/**
 * Whether JSON carries these messages exactly. A message's own properties may
 * be undefined (JSON leaves them out, and reading them gives undefined again);
 * below that only strings, booleans, null, finite numbers other than -0, and
 * plain objects and dense arrays of those (no Proxy), each object reached once (JSON
 * would copy a shared one twice), with no undefined inside.
 */
export function jsonExact(messages: readonly unknown[]): boolean {
  let seen: Set<object> | undefined;
  const exact = (value: unknown): boolean => {
    switch (typeof value) {
      case "string":
      case "boolean":
        return true;
      case "number":
        return Number.isFinite(value) && !Object.is(value, -0);
      case "object": {
        if (value === null) return true;
        // Structured clone refuses a Proxy; JSON would read through it.
        if (isProxy(value)) return false;
        seen ??= new Set();
        if (seen.has(value)) return false;
        seen.add(value);
        if (Array.isArray(value)) {
          if (Object.getPrototypeOf(value) !== Array.prototype) return false;
          const keys = Object.keys(value);
          if (keys.length !== value.length) return false;
          for (let i = 0; i < value.length; i++) if (!exact(value[i])) return false;
          return true;
        }
        if (Object.getPrototypeOf(value) !== Object.prototype) return false;
        for (const key in value) {
          if (!Object.hasOwn(value, key)) return false;
          if (!exact((value as Record<string, unknown>)[key])) return false;
        }
        return true;
      }
      default:
        return false;
    }
  };
  for (const message of messages) {
    if (typeof message !== "object" || message === null) return false;
    for (const key in message) {
      const value = (message as Record<string, unknown>)[key];
      if (value !== undefined && !exact(value)) return false;
    }
  }
  return true;
}
