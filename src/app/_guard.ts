// Run-time enforcement of "a script cannot fork": every LangL script runs
// under a mark in an AsyncLocalStorage, which follows it across `await`, and
// every AppL entry point refuses to run under a mark that says "script".
//
// Entering a new mark costs an `AsyncLocalStorage.run` (on Deno 2.9.6 a new
// context object and a WeakMap entry, the largest cost of a short process).
// A lane pays it once for many scripts forked from one async context (a
// forkAll call): its mark is mutable, procpool's own code running in the
// lane's context flips it to "internal" for the synchronous stretch it runs,
// and everything else there, which is script code and its continuations,
// sees "script". Each script starts in a promise job of its own, registered
// in the lane's context, and runs last in it (procpool's bookkeeping may run
// before it in that job, never after it): the end of a job restores the
// context, so what one script does to it stays with that script (a reaction
// costs far less than an `AsyncLocalStorage.run` on Deno 2.9.6).
import { AsyncLocalStorage } from "node:async_hooks";
import { types } from "node:util";
import { NestedForkError } from "../errors.ts";

/** A script's mark; a process record is its own, so that it can be recognised. */
export interface Mark {
  readonly internal: boolean;
}

const insideScript = new AsyncLocalStorage<Mark | undefined>();
const SCRIPT: Mark = Object.freeze({ internal: false });

// Lanes flip their own marks; this is the writable view they use.
type LaneMark = { internal: boolean };

/** Calls `script(...args)` marked as LangL code. */
export function runAsScript<A extends unknown[], R>(script: (...args: A) => R, ...args: A): R {
  return insideScript.run(SCRIPT, script, ...args);
}

/** Calls `script(a)` marked as LangL code; returns what it returned, `adopted`. */
export function runAdoptedAsScript<A, R>(script: (a: A) => R, a: A): unknown {
  return callMarked(SCRIPT, script, a);
}

/**
 * Calls a process's script, `fn(lang)` or `fn(item, lang)`, marked as LangL
 * code by its record, so that it can be recognised (isRunningScript); returns
 * what it returned, `adopted`. (The path an instrument's probe takes, a lane's
 * items included: see _lane_script.ts.)
 */
export function callScript(
  record: Mark & { lang: unknown },
  // deno-lint-ignore no-explicit-any
  fn: (...args: any[]) => unknown,
  item: unknown,
  withItem: boolean,
): unknown {
  return withItem
    ? runMarked(record, callAdopted2, fn, item, record.lang)
    : callMarked(record, fn, record.lang);
}

/**
 * Calls a forkProcess script, `fn(lang)`, marked by its record; returns what
 * it returned, `adopted`. The path of every fork without a probe: it passes
 * `AsyncLocalStorage.run` its arguments as they are, with no rest array
 * built and spread again on the way (the hand-off's second job runs this
 * before the script's first line).
 */
export function callMarked(
  record: Mark,
  // deno-lint-ignore no-explicit-any
  fn: (lang: any) => unknown,
  lang: unknown,
): unknown {
  // One run, the script called by a frame of ours: `run` would call it with
  // `this` null, and adopting a thenable in a second run would hide what the
  // script set with `enterWith` from its `then` (review of c5694db).
  return insideScript.run(record, callAdopted, fn, lang);
}

/** Calls `script(...args)` as LangL code under `mark` (see {@linkcode isRunningScript}). */
export function runMarked<A extends unknown[], R>(
  mark: Mark,
  script: (...args: A) => R,
  ...args: A
): R {
  return insideScript.run(mark, script, ...args);
}

/** Whether the caller is the script run under `mark` (or one of its continuations). */
export function isRunningScript(mark: Mark): boolean {
  return insideScript.getStore() === mark;
}

/** Whether the caller runs under any mark (a script, or procpool's code in a lane). */
export function isInsideMark(): boolean {
  return insideScript.getStore() !== undefined;
}

/**
 * What a script returned, as something procpool can wait on without running
 * script code: called under the script's mark. A native promise is kept
 * (procpool waits on it with the built-in `then`, as `await` does, which
 * ignores a `then` of its own); anything else that could run script code (a
 * thenable, a promise with a `constructor` of its own, a subclass, a proxy)
 * is resolved here, so that reading its `then`, and the job that calls it,
 * are the script's.
 */
export function adopted(result: unknown): unknown {
  return isInert(result) ? result : new Promise((resolve) => resolve(result));
}

/**
 * Whether procpool may keep a script's result as it is (`adopted`): a
 * primitive, or a native promise of the built-in prototype with no
 * `constructor` of its own. Runs no code of the result's: `types.isPromise`
 * is false for a proxy, so the reads after it meet no trap.
 */
function isInert(result: unknown): boolean {
  if ((typeof result !== "object" || result === null) && typeof result !== "function") {
    return true;
  }
  return types.isPromise(result) && Object.getPrototypeOf(result) === Promise.prototype &&
    !Object.hasOwn(result, "constructor");
}

const promiseThen = Promise.prototype.then;

/**
 * Registers `onReturned` and `onThrew` on a script's result with the
 * built-in `then` (a `then` of the promise's own is ignored, as by `await`).
 * Outside the script's mark only on an `adopted` result, which runs nothing
 * of the script's here.
 */
export function whenSettled(
  result: unknown,
  onReturned: (value: unknown) => void,
  onThrew: (error: unknown) => void,
): void {
  try {
    if (result instanceof Promise) {
      promiseThen.call(result, onReturned, onThrew);
      return;
    }
  } catch {
    // Dressed as a promise (a proxy, maybe revoked), or a constructor that
    // throws: settled below as `await` would settle it.
  }
  let promise: Promise<unknown>;
  try {
    promise = Promise.resolve(result);
  } catch (error) {
    promise = Promise.reject(error);
  }
  promiseThen.call(promise, onReturned, onThrew);
}

/**
 * An `adopted` result as a promise of procpool's, through the built-in
 * `then` (never a `finally` or `then` of the script's); `done` runs once it
 * settles.
 */
export function afterSettled<T>(result: unknown, done: () => void): Promise<T> {
  return promiseThen.call(
    result instanceof Promise ? result : Promise.resolve(result),
    (value) => {
      done();
      return value;
    },
    (error) => {
      done();
      throw error;
    },
  ) as Promise<T>;
}

function callAdopted<A, R>(script: (a: A) => R, a: A): unknown {
  return adopted(script(a));
}

function callAdopted2<A, B, R>(script: (a: A, b: B) => R, a: A, b: B): unknown {
  return adopted(script(a, b));
}

/** Whether the caller is any LangL script. */
export function isInsideScript(): boolean {
  const mark = insideScript.getStore();
  return mark !== undefined && !mark.internal;
}

/** Throws NestedForkError if the caller is a LangL script. */
export function refuseInsideScript(operation: string): void {
  const mark = insideScript.getStore();
  if (mark !== undefined && !mark.internal) throw new NestedForkError(operation);
}

/**
 * Calls `fn` outside any mark, for procpool code that may call user code
 * (abort listeners, log sinks) from inside a lane, so that callbacks those
 * register do not inherit the lane.
 */
export function outsideScripts<R>(fn: () => R): R {
  // Not `exit`: on Deno 2.9.6 it hides the store from synchronous code only,
  // and callbacks scheduled inside it still inherit the mark.
  return insideScript.getStore() === undefined ? fn() : insideScript.run(undefined, fn);
}

/**
 * One async context for many scripts. Only code already running in the
 * lane's context (inside {@linkcode ScriptLane.open}, or a reaction
 * registered there) may call {@linkcode ScriptLane.start}.
 */
export class ScriptLane {
  readonly #mark: LaneMark = { internal: true };
  /** The lane's context, taken once: what a script did to the context stops at its failure. */
  #context: (<R>(fn: () => R) => R) | undefined;

  /** Runs `body` as internal code in a new lane, forked from the caller's context. */
  static open<R>(body: (lane: ScriptLane) => R): R {
    const lane = new ScriptLane();
    try {
      return insideScript.run(lane.#mark, ScriptLane.#enter<R>, lane, body);
    } finally {
      // From now on, whatever runs in the lane and is not procpool's own
      // code is a script's continuation.
      lane.#mark.internal = false;
    }
  }

  /**
   * Calls `script(a, b)` as LangL code and registers `onReturned` and
   * `onThrew` on its outcome while still marked as the script: whatever of
   * the result runs then (a thenable's `then`, a proxy's traps, a
   * `constructor` getter) is the script's, with no `adopted` copy. The
   * reactions run in the lane's context, as procpool's code. The caller is a
   * promise job of the script's own, registered in the lane's context: a
   * script that changes the context (`AsyncLocalStorage.prototype.enterWith`)
   * changes it only until that job ends, never for the lane's other scripts.
   */
  start<A, B>(
    script: (a: A, b: B) => unknown,
    a: A,
    b: B,
    onReturned: (value: unknown) => void,
    onThrew: (error: unknown) => void,
  ): void {
    const mark = this.#mark;
    const before = mark.internal;
    mark.internal = false;
    try {
      let result: unknown;
      try {
        result = script(a, b);
      } catch (error) {
        result = Promise.reject(error);
      }
      whenSettled(result, onReturned, onThrew);
    } finally {
      mark.internal = before;
    }
  }

  static #enter<R>(lane: ScriptLane, body: (lane: ScriptLane) => R): R {
    lane.#context = AsyncLocalStorage.snapshot();
    return body(lane);
  }

  /**
   * Runs `fn` in the lane's own context, outside any mark: for procpool code
   * after a script that may call user code (abort listeners, log sinks),
   * whatever the script left in the context (`enterWith`) (API.md rule 6).
   */
  outside<R>(fn: () => R): R {
    return this.#context!(() => outsideScripts(fn));
  }

  /** Runs `fn(a, b)` as procpool code from a reaction registered in the lane. */
  internal<A, B = undefined>(fn: (a: A, b: B) => void, a: A, b?: B): void {
    const mark = this.#mark;
    const before = mark.internal;
    mark.internal = true;
    try {
      fn(a, b as B);
    } finally {
      mark.internal = before;
    }
  }
}
