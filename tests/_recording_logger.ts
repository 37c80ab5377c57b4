// A RuntimeLogger for tests that keeps what it is given.
import type { RuntimeLogger } from "../mod.ts";

/** A logger that keeps every record it gets, by level. */
export function recordingLogger(): RuntimeLogger & {
  records: { level: string; message: string; properties: Record<string, unknown> }[];
} {
  const records: { level: string; message: string; properties: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, properties: Record<string, unknown> = {}) =>
    void records.push({ level, message, properties });
  return {
    records,
    isEnabledFor: () => false,
    debug: at("debug"),
    info: at("info"),
    warn: at("warning"),
    error: at("error"),
  };
}
