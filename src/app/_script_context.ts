// Where the guard's mark lives: one slot of the async context, the value
// V8 carries across `await`, promise reactions and timers (its
// "continuation-preserved embedder data", which Deno's AsyncLocalStorage is
// built on).
//
// On Deno 2.9.6 `AsyncLocalStorage.run` builds a context object, a key
// object for it and a WeakMap entry from that key to the store. The WeakMap
// lives long and its keys are young, so every run adds an ephemeron entry
// the next scavenge must process, and the entries of processes that have
// ended stay in it until a full GC: in a fork+await drain the guard cost
// about 2-4 us of CPU per process, most of it in scavenges. When Deno's own
// context primitives (the ones AsyncLocalStorage uses) are reachable, the
// mark is instead a property of the context object itself: one object per
// run, no WeakMap (and a small one when the context holds nothing else). The context keeps the shape Deno gives it (a
// prototype-less object of per-variable entries, which other
// AsyncLocalStorage instances copy when they run), and a self-test at load
// checks that both kinds still see their values through each other; if any
// of this is missing or different, the mark falls back to an
// AsyncLocalStorage.
import { AsyncLocalStorage } from "node:async_hooks";

/** Reads and sets one value in the current async context. */
export interface ContextSlot<T> {
  /** The value in the current context, or undefined. */
  get(): T | undefined;
  /** Calls `fn(...args)` in a context that is the current one with the value `value`. */
  run<A extends unknown[], R>(value: T | undefined, fn: (...args: A) => R, ...args: A): R;
}

interface CoreContext {
  getAsyncContext(): unknown;
  setAsyncContext(context: unknown): void;
}

// A string key, like Deno's own numeric ones, so that code that counts the
// context's keys (to learn whether any variable is set) counts this one.
const KEY = "procpool";

type Context = Record<string, unknown> | undefined | null;

// The usual context of a script holds nothing but the mark. Copying a
// context means copying a prototype-less dictionary (about 1 us, more than
// the rest of the run), so a context that holds only the mark has a shape of
// its own, with no prototype above it either, and is made without a copy.
class MarkOnly {
  constructor(readonly procpool: unknown) {}
}
Object.setPrototypeOf(MarkOnly.prototype, null);

class CoreSlot<T> implements ContextSlot<T> {
  constructor(readonly core: CoreContext) {}

  get(): T | undefined {
    return (this.core.getAsyncContext() as Context)?.[KEY] as T | undefined;
  }

  run<A extends unknown[], R>(value: T | undefined, fn: (...args: A) => R, ...args: A): R {
    const core = this.core;
    const before = core.getAsyncContext() as Context;
    core.setAsyncContext(
      before == null || before instanceof MarkOnly
        ? new MarkOnly(value)
        : { __proto__: null, ...before, [KEY]: value },
    );
    try {
      return fn(...args);
    } finally {
      core.setAsyncContext(before);
    }
  }
}

class StorageSlot<T> implements ContextSlot<T> {
  readonly #storage = new AsyncLocalStorage<T | undefined>();

  get(): T | undefined {
    return this.#storage.getStore();
  }

  run<A extends unknown[], R>(value: T | undefined, fn: (...args: A) => R, ...args: A): R {
    return this.#storage.run(value, fn, ...args);
  }
}

function denoCore(): CoreContext | undefined {
  try {
    if (typeof Deno !== "object") return undefined;
    const internal = Object.getOwnPropertySymbols(Deno)
      .find((symbol) => symbol.description === "Deno.internal");
    if (internal === undefined) return undefined;
    const core = (Deno as unknown as Record<symbol, { core?: Partial<CoreContext> } | undefined>)[
      internal
    ]?.core;
    if (
      typeof core?.getAsyncContext !== "function" || typeof core.setAsyncContext !== "function"
    ) {
      return undefined;
    }
    return core as CoreContext;
  } catch {
    return undefined;
  }
}

/** Whether a slot and an AsyncLocalStorage each see their own value inside the other's runs. */
function coexists<T>(slot: ContextSlot<T>, mark: T): boolean {
  const other = new AsyncLocalStorage<number>();
  const inside = other.run(
    1,
    () =>
      slot.run(mark, () =>
        other.getStore() === 1 && slot.get() === mark &&
        other.run(2, () => other.getStore() === 2 && slot.get() === mark)),
  );
  const around = slot.run(
    mark,
    () =>
      other.run(3, () => other.getStore() === 3 && slot.get() === mark) &&
      slot.run(undefined, () => slot.get() === undefined) && slot.get() === mark,
  );
  return inside && around && slot.get() === undefined && other.getStore() === undefined;
}

/** A slot kept in an AsyncLocalStorage (the fallback; tests use it directly). */
export function storageSlot<T>(): ContextSlot<T> {
  return new StorageSlot<T>();
}

/** Whether `slot` keeps its value in the context object itself (Deno's primitives). */
export function isCoreSlot(slot: ContextSlot<unknown>): boolean {
  return slot instanceof CoreSlot;
}

/** A new slot for values like `probe`: Deno's context primitives if they pass the self-test. */
export function contextSlot<T>(probe: T): ContextSlot<T> {
  const core = denoCore();
  if (core !== undefined) {
    const slot = new CoreSlot<T>(core);
    try {
      if (coexists(slot, probe)) return slot;
    } catch {
      // Different primitives than expected: the portable slot below.
    }
  }
  return new StorageSlot<T>();
}
