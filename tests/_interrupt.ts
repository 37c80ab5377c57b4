// Ctrl-C for an example run as a child process: wait until it prints a
// marker (it has started what it should stop), send SIGINT, read the rest.

/** The child's whole stdout, its exit code and its stderr, after a SIGINT once `marker` showed. */
export async function interruptAfter(
  child: Deno.ChildProcess,
  marker: RegExp,
): Promise<{ out: string; code: number; err: string }> {
  const errText = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!marker.test(out)) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  child.kill("SIGINT");
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    out += chunk.value;
  }
  const { code } = await child.status;
  return { out, code, err: await errText };
}
