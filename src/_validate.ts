// Argument checks for the public boundary. Every message names the argument
// and the value received, so a user can fix the call without reading our code.

/** A short, safe rendering of any value for an error message. */
export function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (typeof value === "bigint") return `${value}n`;
  if (value === null || typeof value !== "object") return String(value);
  if (Array.isArray(value)) return "an array";
  return "an object";
}

function typeName(value: unknown): string {
  return value === null ? "null" : typeof value;
}

export function requireFunction(name: string, value: unknown): void {
  if (typeof value !== "function") {
    throw new TypeError(`${name} must be a function, got ${typeName(value)} ${show(value)}`);
  }
}

export function requireNumber(name: string, value: unknown): asserts value is number {
  if (typeof value !== "number") {
    throw new TypeError(`${name} must be a number, got ${typeName(value)} ${show(value)}`);
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
    throw new TypeError(`${name} must be an AbortSignal, got ${typeName(value)} ${show(value)}`);
  }
}

export function requireObject(name: string, value: unknown): void {
  if (value === null || typeof value !== "object") {
    throw new TypeError(`${name} must be an object, got ${typeName(value)} ${show(value)}`);
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
