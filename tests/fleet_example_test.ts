// examples/fleet.ts from the command line: a private redis-server, three OS
// processes with a runtime each on one key, the fleet held at the limit, and
// everything it started stopped afterwards (also on Ctrl-C).
import { assert, assertEquals, assertLessOrEqual, assertRejects } from "@std/assert";
import { type JobRecord, peakOverlap, sharedTokens } from "../examples/_fleet_checks.ts";
import { interruptAfter } from "./_interrupt.ts";

const FLEET = new URL("../examples/fleet.ts", import.meta.url).pathname;
const PERMISSIONS = [
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-net=127.0.0.1",
];

function fleet(args: string[]): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, FLEET, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  });
}

/** The port the example's redis-server listened on, from its first line. */
function serverPort(out: string): number {
  const port = Number(out.match(/^redis-server on 127\.0\.0\.1:(\d+)/m)?.[1]);
  assert(port > 0, out);
  return port;
}

/** Nothing listens on `port` any more: the example stopped its server. */
async function assertClosed(port: number): Promise<void> {
  await assertRejects(
    () => Deno.connect({ hostname: "127.0.0.1", port }),
    Deno.errors.ConnectionRefused,
  );
}

Deno.test("examples/fleet.ts: three OS processes share one limit in Redis", async (t) => {
  await t.step("the fleet never runs more than --limit jobs at once", async () => {
    const args = ["--processes", "3", "--limit", "2", "--max", "2", "--jobs", "4"];
    const { code, stdout, stderr } = await fleet(args).output();
    const out = new TextDecoder().decode(stdout);
    const err = new TextDecoder().decode(stderr);
    assertEquals(code, 0, `${out}\n${err}`);
    // Every job printed its token and the fleet-wide count it saw (a Redis counter).
    const starts = [
      ...out.matchAll(
        /^([ABC]): job \d+ starts {2}fence (\d+) {2}running in the fleet (\d+)\/2 {2}leases held here (\d+)$/gm,
      ),
    ];
    assertEquals(starts.length, 12, out);
    for (const [, , fence, running, held] of starts) {
      assert(Number.isSafeInteger(Number(fence)), fence);
      assertLessOrEqual(Number(running), 2);
      assertLessOrEqual(Number(held), 2); // a runtime holds at most maxProcesses leases
    }
    assertEquals(new Set(starts.map((match) => match[1])).size, 3);
    const peak = Number(
      out.match(/^at most (\d+) jobs ran at once across the fleet: limit 2, 6 local slots$/m)?.[1],
    );
    assert(peak >= 1 && peak <= 2, out);
    assert(
      out.includes("the fleet never exceeded the limit, and no token was used twice at once"),
      out,
    );
    // Every runtime's dispose gave its leases back and withdrew its wait records.
    assert(
      /^left in Redis after the runtimes were disposed: 0 lease or wait records/m.test(out),
      out,
    );
    assert(out.includes("stopped 3 child processes and the redis-server"), out);
    await assertClosed(serverPort(out));
  });

  await t.step("Ctrl-C stops the children and the server", async () => {
    const { out, code, err } = await interruptAfter(fleet(["--jobs", "1000"]).spawn(), / starts /);
    assertEquals(code, 130, `${out}\n${err}`);
    assert(out.includes("interrupted (Ctrl-C)"), out);
    assert(out.includes("stopped 3 child processes and the redis-server"), out);
    await assertClosed(serverPort(out));
  });

  await t.step("a bad flag is a usage error that starts nothing", async () => {
    const { code, stdout, stderr } = await fleet(["--limit", "0"]).output();
    assertEquals(code, 2);
    assertEquals(new TextDecoder().decode(stdout), "");
    assertEquals(
      new TextDecoder().decode(stderr).trim(),
      'error: --limit must be an integer >= 1, got "0"',
    );
  });
});

Deno.test("examples/fleet.ts: the checks the parent makes", async (t) => {
  const job = (fence: number, startUs: number, endUs: number): JobRecord => ({
    runtime: "A",
    job: 1,
    fence,
    startUs,
    endUs,
  });

  await t.step("peakOverlap counts jobs running at one instant; an end meets a start", () => {
    assertEquals(peakOverlap([]), 0);
    assertEquals(peakOverlap([job(1, 0, 10), job(2, 10, 20)]), 1);
    assertEquals(peakOverlap([job(1, 0, 10), job(2, 5, 20), job(3, 6, 7)]), 3);
  });

  await t.step("sharedTokens finds jobs that overlapped under one token", () => {
    assertEquals(sharedTokens([job(1, 0, 10), job(1, 10, 20), job(2, 5, 15)]), 0);
    assertEquals(sharedTokens([job(1, 0, 10), job(1, 9, 20)]), 1);
  });
});
