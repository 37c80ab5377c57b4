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

/** An object that only ever fulfils one promise. */
export interface Resolver<T> {
  resolve: (value: T) => void;
}

// deno-lint-ignore no-explicit-any
let adoptingResolve: Resolver<any>;

function adoptResolve<T>(resolve: (value: T) => void): void {
  adoptingResolve.resolve = resolve;
}

/**
 * A new promise fulfilled through `resolver.resolve`. The reject function
 * does not escape, so optimised code need not allocate it: about 55 bytes
 * less than {@linkcode promiseFor} (a promise that must be able to reject
 * can fulfil with a value its one reaction turns into a throw instead).
 */
export function resolvingPromiseFor<T>(resolver: Resolver<T>): Promise<T> {
  adoptingResolve = resolver;
  return new Promise<T>(adoptResolve);
}
