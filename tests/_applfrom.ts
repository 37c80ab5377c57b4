// Whether AppL takes the caller for a LangL script: the nested-fork guard
// seen from the outside, as the guard's tests ask it.
import { type AppL, NestedForkError } from "../mod.ts";

/** "refused" if AppL refuses the caller as a script, else "allowed". */
export function appLFrom(app: AppL): "refused" | "allowed" {
  try {
    app.tryForkProcess(() => "probe")?.cancel();
    return "allowed";
  } catch (error) {
    if (error instanceof NestedForkError) return "refused";
    throw error;
  }
}
