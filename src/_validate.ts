// Argument checks for the public boundary. Every message names the argument
// and the value received, so a user can fix the call without reading our code.

/** "Name: message" of an Error, or the thrown value as text: for a message or a span about it. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * A short rendering of any value for an error message. Total: it never
 * throws, whatever it is given (a revoked Proxy, an object whose getters
 * throw), so procpool's own message is never replaced by the engine's.
 */
export function show(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "function":
      return "a function";
    case "bigint":
      return `${value}n`;
    case "symbol":
      return value.toString();
    case "object":
      if (value === null) return "null";
      try {
        return Array.isArray(value) ? "an array" : "an object";
      } catch {
        // Array.isArray throws only for a revoked Proxy.
        return "a revoked Proxy";
      }
    default:
      return String(value);
  }
}

/**
 * What was received, for "got ..." in a TypeError: the type and the value
 * ("number 5", "string \"5\""), or the value alone where it already says its
 * type ("undefined", "null", "an object").
 */
export function received(value: unknown): string {
  const type = typeof value;
  if (value === null || type === "undefined" || type === "object" || type === "function") {
    return show(value);
  }
  return `${type} ${show(value)}`;
}

export function requireFunction(name: string, value: unknown): void {
  if (typeof value !== "function") {
    throw new TypeError(`${name} must be a function, got ${received(value)}`);
  }
}

export function requireNumber(name: string, value: unknown): asserts value is number {
  if (typeof value !== "number") {
    throw new TypeError(`${name} must be a number, got ${received(value)}`);
  }
}

export function requirePositiveInteger(name: string, value: unknown): asserts value is number {
  requireNumber(name, value);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${show(value)}`);
  }
}

export function requireSafeInteger(name: string, value: unknown): asserts value is number {
  requireNumber(name, value);
  if (!Number.isSafeInteger(value)) {
    throw new RangeError(`${name} must be a safe integer, got ${show(value)}`);
  }
}

/** A duration: finite and >= 0 (or Infinity where `allowInfinity`). */
export function requireDuration(
  name: string,
  value: unknown,
  allowInfinity = false,
): asserts value is number {
  requireNumber(name, value);
  if (Number.isNaN(value) || value < 0 || (!allowInfinity && value === Infinity)) {
    const what = allowInfinity ? "a non-negative number" : "a finite non-negative number";
    throw new RangeError(`${name} must be ${what}, got ${show(value)}`);
  }
}

export function requireSignal(name: string, value: unknown): asserts value is AbortSignal {
  if (!(value instanceof AbortSignal)) {
    throw new TypeError(`${name} must be an AbortSignal, got ${received(value)}`);
  }
}

export function requireObject(name: string, value: unknown): void {
  if (value === null || typeof value !== "object") {
    throw new TypeError(`${name} must be an object, got ${received(value)}`);
  }
}

export function requireIterable(name: string, value: unknown): void {
  const candidate = value as Partial<Iterable<unknown> & AsyncIterable<unknown>> | null | undefined;
  if (
    candidate === null || candidate === undefined ||
    (typeof candidate[Symbol.iterator] !== "function" &&
      typeof candidate[Symbol.asyncIterator] !== "function")
  ) {
    throw new TypeError(`${name} must be an iterable or async iterable, got ${show(value)}`);
  }
}

/**
 * The error for a method called without its object: `const { delay } = lang`
 * then `delay(1)`, or `app.forkProcess` passed as a callback. procpool's
 * methods are not bound (binding every method of every process's `lang`
 * would cost more than a short process); this says how to call them.
 */
export function detachedCall(receiver: string, method: string): TypeError {
  const call = method.startsWith("[") ? `${receiver}${method}` : `${receiver}.${method}`;
  return new TypeError(
    `${call} was called without its ${receiver} (a destructured or detached method); ` +
      `call it as ${call}(...), or bind it: ${call}.bind(${receiver})`,
  );
}
