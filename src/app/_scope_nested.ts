// `app.scope`, the entry point that opens a nested scope: argument checks,
// then the child scope, which registers with its parent (Scope's
// constructor) and runs the body. Setup code, run once per nested scope; like
// the fork entry points (_scope_forks.ts) it needs nothing private from the
// scope, so the scope file keeps to its own bookkeeping.
import { requireFunction } from "../_validate.ts";
import type { AppL, ScopeOptions } from "./app.ts";
import { checkScopeOptions } from "./_options.ts";
// A value import of the module that imports this one: used only at call time.
import { Scope } from "./scope.ts";

/** `app.scope` on `parent`. */
export function scopeNested<T>(
  parent: Scope,
  body: (app: AppL) => Promise<T>,
  options: ScopeOptions | undefined,
): Promise<T> {
  try {
    Scope.enter(parent, "scope");
    requireFunction("scope body", body);
    return new Scope(parent.core, parent, checkScopeOptions("scope", options)).run(body);
  } catch (error) {
    return Promise.reject(error);
  }
}
