// The demo's --trace flag writes a timeline Perfetto can open. Here it is
// `--trace=-`, to the child's stdout, so that the test needs no write permission.
import { assert, assertEquals } from "@std/assert";
import type { ChromeTrace } from "../mod.ts";

Deno.test("examples/meteors.ts --trace writes Chrome trace-event JSON", async () => {
  const meteors = new URL("../examples/meteors.ts", import.meta.url).pathname;
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-env",
      meteors,
      "--max",
      "2",
      "--seed",
      "1",
      "--interval-ms",
      "20",
      "--trace=-",
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  assertEquals(code, 0, new TextDecoder().decode(stderr));
  const out = new TextDecoder().decode(stdout);
  const json = out.split("\n").find((line) => line.startsWith('{"traceEvents"'));
  if (json === undefined) throw new Error(`no timeline in:\n${out}`);
  const trace: ChromeTrace = JSON.parse(json);
  const begins = trace.traceEvents.filter((event) => event.ph === "B");
  const ends = trace.traceEvents.filter((event) => event.ph === "E");
  assert(begins.length > 0);
  assertEquals(ends.length, begins.length);
  assert(trace.traceEvents.some((event) => event.ph === "C" && event.name === "active"));
});

Deno.test("examples/meteors.ts --trace without a file name is a usage error", async () => {
  const meteors = new URL("../examples/meteors.ts", import.meta.url).pathname;
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-env", meteors, "--trace="],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(code, 2);
  assert(new TextDecoder().decode(stderr).includes("--trace needs a file name"));
});
