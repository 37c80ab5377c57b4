// Run-time enforcement of "a script cannot fork": every LangL script runs with
// a mark in an AsyncLocalStorage, which follows it across `await`, and every
// AppL entry point refuses to run under that mark.
import { AsyncLocalStorage } from "node:async_hooks";
import { NestedForkError } from "../errors.ts";

const insideScript = new AsyncLocalStorage<true>();

/** Calls `script(...args)` marked as LangL code. */
export function runAsScript<A extends unknown[], R>(script: (...args: A) => R, ...args: A): R {
  return insideScript.run(true, script, ...args);
}

/** Throws NestedForkError if the caller is a LangL script. */
export function refuseInsideScript(operation: string): void {
  if (insideScript.getStore() === true) throw new NestedForkError(operation);
}
