// The machine and commit a benchmark run measured, for the head of its output.

/** A command's stdout, or undefined if it could not run. */
export async function stdoutOf(command: string, ...args: string[]): Promise<string | undefined> {
  try {
    const out = await new Deno.Command(command, { args, stderr: "null" }).output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : undefined;
  } catch {
    return undefined;
  }
}

export async function machine(): Promise<string> {
  // Deno wants --allow-all to read /proc/cpuinfo directly; cat needs only --allow-run.
  const info = await stdoutOf("cat", "/proc/cpuinfo") ?? "";
  const cpu = /^model name\s*:\s*(.+)$/m.exec(info)?.[1] ?? "unknown CPU";
  const cores = await stdoutOf("nproc") ?? String(navigator.hardwareConcurrency);
  const { deno, v8, typescript } = Deno.version;
  return [
    `- procpool: ${await revision()}`,
    `- date: ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
    `- CPU: ${cpu}; nproc ${cores}; ${Deno.build.target}`,
    `- Deno ${deno}, V8 ${v8}, TypeScript ${typescript}`,
  ].join("\n");
}

/** The commit measured, and whether the library's sources differ from it. */
export async function revision(): Promise<string> {
  const repo = new URL("..", import.meta.url).pathname;
  const head = await stdoutOf("git", "-C", repo, "rev-parse", "--short", "HEAD");
  if (head === undefined) return "unknown revision";
  const dirty = await stdoutOf(
    "git",
    "-C",
    repo,
    "status",
    "--porcelain",
    "--",
    "src",
    "mod.ts",
    "redis.ts",
  );
  return dirty ? `${head} + uncommitted changes in src/, mod.ts or redis.ts` : head;
}
