// Writing a property of a copy as structured clone makes it: own, also when
// it is named `__proto__` (an assignment would set the copy's prototype).

/** Sets an own data property, also one named `__proto__`. */
export function putOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else target[key] = value;
}
