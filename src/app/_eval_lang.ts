// evalLang: a LangL script run inline, in the caller's scope, without a slot.
// It is still LangL code (process id 0, no AppL) and is cancelled with its
// scope, which waits for it like for any other work.
import { ProcessCancelledError } from "../errors.ts";
import { requestCancellation } from "../lang/cancellation.ts";
import { LangInterpreter } from "../lang/interpreter.ts";
import type { Process } from "../lang/lang.ts";
import { afterSettled, runAdoptedAsScript } from "./_guard.ts";
import type { Scope } from "./scope.ts";
import type { ScopeDependent } from "./_fork_host.ts";

export function runInline<T>(scope: Scope, script: Process<T>): Promise<T> {
  const lang = new LangInterpreter(scope.core, 0, undefined);
  const dependent: ScopeDependent = {
    scopeCancelled: (reason) =>
      requestCancellation(
        lang,
        new ProcessCancelledError("an evalLang script was cancelled with its scope", {
          cause: reason,
        }),
      ),
  };
  scope.addDependent(dependent);
  scope.workStarted();
  let result: unknown;
  try {
    // Adopted under the mark: a thenable's `then` is script code.
    result = runAdoptedAsScript(script, lang);
  } catch (error) {
    result = Promise.reject(error);
  }
  return afterSettled<T>(result, () => {
    scope.removeDependent(dependent);
    scope.workEnded();
  });
}
