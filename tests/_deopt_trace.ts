// Runs a fixture in a child process under `--trace-deopt` and reads V8's
// trace: the deoptimisation tests' shared part.
import { assertEquals } from "@std/assert";

/** The child's stdout (where V8 writes the trace); fails unless it exits with 0. */
export async function deoptTrace(fixture: URL, v8Flags: readonly string[] = []): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-env",
      "--allow-read",
      `--v8-flags=${["--trace-deopt", ...v8Flags].join(",")}`,
      fixture.href,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assertEquals(output.code, 0, stderr);
  return new TextDecoder().decode(output.stdout);
}

/**
 * The functions thrown away because a GC dropped a hidden class they were
 * optimised for ("embedded weak objects cleared"), one entry per time.
 */
export function droppedWithMaps(trace: string): string[] {
  return [
    ...trace.matchAll(
      /<SharedFunctionInfo (\S*)>\) \(opt id \d+\) for deoptimization, reason: embedded weak objects cleared/g,
    ),
  ].map(([, name]) => name);
}
