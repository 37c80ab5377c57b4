// Logging from procpool's own bookkeeping (a process stopped, a scope ended).
// Nobody could be told if the logger threw there, and its error would replace
// what matters (the body's error) or break the bookkeeping half way: the
// record is lost instead, and procpool's work goes on.
import type { RuntimeLogger } from "./options.ts";

export function logSafely(
  logger: RuntimeLogger,
  level: "debug" | "info" | "warn" | "error",
  message: string,
  properties: Record<string, unknown>,
): void {
  try {
    logger[level](message, properties);
  } catch {
    // See above: a throwing logger loses this one record.
  }
}
