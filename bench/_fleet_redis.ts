// What bench:fleet reads from its private redis-server: command counts
// (INFO commandstats, reset with CONFIG RESETSTAT) and the server's CPU time
// (INFO cpu). The driver's own INFO and CONFIG calls are left out.
import type { Redis } from "ioredis";

/** Calls per command name, as INFO commandstats reports them since the last reset. */
export type CommandCounts = Record<string, number>;

/** The driver's own commands, never counted. */
const OWN = new Set(["info", "config"]);

export async function resetStats(redis: Redis): Promise<void> {
  await redis.call("CONFIG", "RESETSTAT");
}

/**
 * Calls per command since the last reset. Redis counts the commands a Lua
 * script runs (redis.call) as well as the EVALSHA that ran it.
 */
export async function commandCounts(redis: Redis): Promise<CommandCounts> {
  const counts: CommandCounts = {};
  for (
    const match of (await redis.info("commandstats")).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)
  ) {
    // Redis 7 names subcommands "config|resetstat".
    if (!OWN.has(match[1].split("|")[0])) counts[match[1]] = Number(match[2]);
  }
  return counts;
}

export function totalCommands(counts: CommandCounts): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/** Script runs (EVALSHA, EVAL): what a client sends; the commands they run are counted apart. */
export function scriptCalls(counts: CommandCounts): number {
  return (counts.evalsha ?? 0) + (counts.eval ?? 0);
}

/** The most called commands, "evalsha 1.0, zrem 0.5" per `per`. */
export function topCommands(counts: CommandCounts, per: number, top = 4): string {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, n]) => `${name} ${(n / per).toFixed(n / per >= 10 ? 0 : 1)}`)
    .join(", ");
}

/** The server's CPU seconds so far, user + sys. */
export async function cpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const field = (name: string) => {
    const value = new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1];
    if (value === undefined) throw new Error(`INFO cpu has no ${name}`);
    return Number(value);
  };
  return field("used_cpu_user") + field("used_cpu_sys");
}
