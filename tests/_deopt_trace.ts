// Runs a fixture in a child process under `--trace-deopt --trace-opt` and
// reads V8's trace: the deoptimisation tests' shared part. Each test also
// checks that the code it watches had been optimised before the phase that
// could throw it away: else no deopt could show, and the test would pass for
// nothing (a later tier-up, a changed trace format).
import { assert, assertEquals } from "@std/assert";

/**
 * V8's compiler threads made the trace depend on the machine's load. A job
 * is compiled from the type feedback of when it began and installed when it
 * ends: one that began before a batch's last item stopped and ended after
 * it (such jobs took 15-25 ms on a busy machine) installed code without
 * that feedback, which deoptimised at the next batch's end, after the
 * fixture's marker ("returnedInLane: Insufficient type feedback for generic
 * keyed access", the brand check of `this.#finish()`): about 1 run in 10 of
 * tests/fork_all_gc_deopt_test.ts failed, and 10 of 10 fixture runs under
 * `--concurrent-recompilation-delay=30`. Compiled on the main thread, from
 * the feedback of the moment, code deoptimises where the code is at fault.
 */
const SYNCHRONOUS_COMPILATION = ["--no-concurrent-recompilation", "--no-concurrent-osr"];

/**
 * The child's stdout (where V8 writes the trace); fails unless it exits with
 * 0. Natives syntax is on for the fixture's markers (_v8_trace_marker.ts).
 */
export async function deoptTrace(fixture: URL, v8Flags: readonly string[] = []): Promise<string> {
  const flags = ["--trace-deopt", "--trace-opt", "--allow-natives-syntax"];
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-env",
      "--allow-read",
      `--v8-flags=${[...flags, ...SYNCHRONOUS_COMPILATION, ...v8Flags].join(",")}`,
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
  const dropped = new RegExp(
    String.raw`<SharedFunctionInfo ?(\S*)>\) \(opt id \d+\) for deoptimization, ` +
      "reason: embedded weak objects cleared",
    "g",
  );
  return [...trace.matchAll(dropped)].map(([, name]) => name || "(anonymous)");
}

/**
 * Fails unless at least `atLeast` of `names` were optimised on their own
 * before the fixture's `marker`. Which of a path's functions V8 compiles on
 * their own and which it only inlines into a caller varies with the
 * compiler threads' speed, so a control names several and asks for some.
 */
export function assertOptimisedBefore(
  trace: string,
  marker: string,
  names: readonly string[],
  atLeast: number,
): void {
  const optimised = optimisedBefore(trace, marker);
  const found = names.filter((name) => optimised.has(name));
  assert(
    found.length >= atLeast,
    `only ${found.length} of ${names.join(", ")} optimised before ${marker} ` +
      `(at least ${atLeast} expected): the test could not have seen a deopt`,
  );
}

/**
 * The functions V8 finished optimising on their own (not only inlined into
 * others) before the fixture called `markV8Trace(marker)`; fails if it never
 * did.
 */
export function optimisedBefore(trace: string, marker: string): Set<string> {
  const at = trace.search(new RegExp(`completed compiling \\S+ <JSFunction ${marker} `));
  assert(at >= 0, `the fixture wrote no ${marker} marker into V8's trace`);
  return new Set(
    [...trace.slice(0, at).matchAll(/completed compiling \S+ <JSFunction (\S+) /g)].map(
      ([, name]) => name,
    ),
  );
}
