// Promises whose resolvers land on an existing object, through one shared
// executor. `new Promise((resolve, reject) => ...)` per call allocates a
// closure and its context on top of the resolvers; on the hot paths (a
// queued fork, an await, a delay) that showed up in the GC profile.

/** An object that settles one promise. */
export interface Settler<T> {
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
}

// deno-lint-ignore no-explicit-any
let adopting: Settler<any>;

function adopt<T>(resolve: (value: T) => void, reject: (reason: unknown) => void): void {
  adopting.resolve = resolve;
  adopting.reject = reject;
}

/** A new promise settled through `settler.resolve` / `settler.reject`. */
export function promiseFor<T>(settler: Settler<T>): Promise<T> {
  adopting = settler;
  return new Promise<T>(adopt);
}
