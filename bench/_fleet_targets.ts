// bench:fleet's verdicts on issue 13's targets, procpool against the better
// of its peers in the same run.
import type { IdleFigures, LoadFigures } from "./_fleet_figures.ts";
import type { Library } from "./_fleet_limiters.ts";
import { ratio } from "./_shared.ts";

export const PEERS = ["redis-semaphore", "bottleneck"] as const;

type Rows<F> = [Library, F][];

export interface RunFigures {
  hold: Rows<LoadFigures>;
  short: Rows<LoadFigures>;
  /** The short row's limit. */
  shortLimit: number;
  handoff: Rows<LoadFigures>;
  idle: Rows<IdleFigures>;
  /** Redis CPU with no limiter connected, ms/s. */
  aloneMsPerS: number;
}

function of<F>(rows: Rows<F>, library: Library): F | undefined {
  return rows.find(([name]) => name === library)?.[1];
}

/** The peer with the best finite `key`: the highest, or the lowest when `lower`. */
function best<F>(
  rows: Rows<F>,
  key: (f: F) => number,
  lower = false,
): [string, number] | undefined {
  const values = PEERS.flatMap((peer) => {
    const f = of(rows, peer);
    return f && Number.isFinite(key(f)) ? [[peer, key(f)] as [string, number]] : [];
  });
  return values.sort((a, b) => (lower ? a[1] - b[1] : b[1] - a[1]))[0];
}

const pct = (value: number) => `${(value * 100).toFixed(1)} %`;

export function targets(figures: RunFigures): string[] {
  const lines: string[] = [];
  const line = (label: string, pass: boolean | undefined, detail: string) => {
    const verdict = pass === undefined ? "SKIP" : pass ? "PASS" : "FAIL";
    lines.push(`- **${verdict}** ${label}: ${detail}`);
  };
  /** procpool's value and the better peer's, or undefined if either is missing. */
  const pair = (rows: Rows<LoadFigures>, key: (f: LoadFigures) => number, lower = false) => {
    const mine = of(rows, "procpool");
    const peer = best(rows, key, lower);
    return mine && peer && Number.isFinite(key(mine))
      ? { mine: key(mine), peer: peer[1], name: peer[0] }
      : undefined;
  };
  const missing = "procpool or both peers missing in this run";

  const util = pair(figures.hold, (f) => f.utilisation);
  line(
    "utilisation ≥ 97 % (limit 8, holds 2–5 ms)",
    util && util.mine >= 0.97,
    util ? `${pct(util.mine)}; best peer ${util.name} ${pct(util.peer)}` : missing,
  );
  const rate = pair(figures.short, (f) => f.perSecond);
  const semaphore = of(figures.short, "redis-semaphore")?.perSecond;
  const fast = of(figures.short, "procpool");
  const peer = rate && of(figures.short, rate.name as Library);
  line(
    "throughput (holds 0–1 ms, limit 16) ≥ 3× the better peer",
    rate && rate.mine >= 3 * rate.peer,
    rate && fast && peer
      ? `${ratio(rate.mine / rate.peer)} ${rate.name}${
        semaphore && rate.name !== "redis-semaphore"
          ? `; ${ratio(fast.perSecond / semaphore)} redis-semaphore`
          : ""
      }; that is about utilisation ${pct(fast.utilisation)} against ${pct(peer.utilisation)} (${
        ratio(fast.utilisation / peer.utilisation)
      }) times mean hold ${peer.meanHold.toFixed(2)} ms against procpool's ${
        fast.meanHold.toFixed(2)
      } (${ratio(peer.meanHold / fast.meanHold)}); at procpool's holds no limiter could pass ${
        ratio(figures.shortLimit / (fast.meanHold / 1000) / rate.peer)
      } ${rate.name}`
      : missing,
  );
  for (
    const [rows, where] of [[figures.hold, "limit 8"], [figures.handoff, "hand-off row"]] as const
  ) {
    const mine = of(rows, "procpool");
    if (mine && mine.crossPairs === 0) {
      line(
        `release→start p50 and p99 (${where})`,
        undefined,
        `procpool had no cross-process hand-off here: every lease stayed with its runtime (${mine.localPairs} same-process pairs, p50 ${
          mine.localP50.toFixed(2)
        } ms)`,
      );
      continue;
    }
    const p50 = pair(rows, (f) => f.p50, true);
    line(
      `release→start p50 ≤ the better peer's (${where})`,
      p50 && p50.mine <= p50.peer,
      p50 ? `${p50.mine.toFixed(2)} ms; ${p50.name} ${p50.peer.toFixed(2)} ms` : missing,
    );
    const p99 = pair(rows, (f) => f.p99, true);
    line(
      `release→start p99 ≤ half the better peer's (${where})`,
      p99 && p99.mine <= p99.peer / 2,
      p99
        ? `${p99.mine.toFixed(2)} ms; ${p99.name} ${p99.peer.toFixed(2)} ms (${
          ratio(p99.mine / p99.peer)
        })`
        : missing,
    );
  }
  const commands = pair(figures.hold, (f) => f.commands, true);
  line(
    "Redis commands per process ≤ ⅓ of the better peer's (limit 8)",
    commands && commands.mine <= commands.peer / 3,
    commands
      ? `${commands.mine.toFixed(1)}; ${commands.name} ${commands.peer.toFixed(1)} (${
        ratio(commands.mine / commands.peer)
      })`
      : missing,
  );
  line(
    "Redis CPU while forks wait idle: reported",
    of(figures.idle, "procpool") ? true : undefined,
    figures.idle.length > 0
      ? figures.idle.map(([name, f]) => `${name} ${f.cpuMsPerS.toFixed(2)} ms/s`).join(", ") +
        ` (Redis alone ${figures.aloneMsPerS.toFixed(2)} ms/s)`
      : missing,
  );
  return lines;
}
