// forkStream runs a million-item input in bounded memory (issue 11, item 1):
// a child process with --expose-gc streams 1 000 000 items from a generator
// and samples the heap after a full GC at eight points; the heap must not
// grow with the items streamed. Were anything kept per item (a result, a
// process record), a million of them would add megabytes, far above the
// margins below.
import { assert, assertEquals } from "@std/assert";

const KB = 1024;

Deno.test("forkStream: memory stays flat over 1 000 000 items", async () => {
  const script = new URL("./_fork_stream_memory.ts", import.meta.url);
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-env", "--v8-flags=--expose-gc", script.pathname, "1000000"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(code, 0, new TextDecoder().decode(stderr));
  const report = JSON.parse(new TextDecoder().decode(stdout)) as {
    gc: boolean;
    ms: number;
    samples: { at: number; heap: number }[];
  };
  assert(report.gc, "the child ran without --expose-gc");
  assertEquals(report.samples.length, 8);
  const [first, warm, ...rest] = report.samples.map((s) => s.heap);
  const peak = Math.max(warm, ...rest);
  const sizes = report.samples.map((s) => `${s.at}: ${(s.heap / KB).toFixed(0)} KB`).join(", ");
  // The first 125 000 items warm up the JIT and the pool's own structures.
  assert(peak - first < 2048 * KB, `heap grew from the start: ${sizes}`);
  assert(peak - warm < 512 * KB, `heap grew with the items: ${sizes}`);
});
