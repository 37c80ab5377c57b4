/**
 * Proves the README's "Install" setups: it builds throw-away projects in a
 * temporary directory outside the repository, each with a copy of procpool's
 * published files, wires them up exactly as the README shows (the JSON blocks
 * are read from README.md), type-checks and runs a small program in each, and
 * removes everything afterwards. It also confirms that the naive setup
 * (importing the copy's mod.ts with no configuration) fails as the README
 * says. Needs no network beyond the npm registry, and the Deno cache is
 * reused, so it takes a few seconds.
 *
 * ```sh
 * deno task setup-check
 * ```
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("..", import.meta.url));
const deno = Deno.execPath();

/** The program each setup runs, and what it must print. */
const PROGRAM = `import { Runtime } from "@procpool/procpool";
import { createTestRuntime } from "@procpool/procpool/testing";

await using runtime = new Runtime({ maxProcesses: 2 });
console.log(await runtime.runApp((app) => app.forkAll([1, 2, 3], (n) => n * n)));
await using test = createTestRuntime({ maxProcesses: 2, seed: 1 });
await test.runApp((app) => app.forkAll([1, 2, 3], (_, lang) => lang.delay(1_000)));
console.log(test.clock.now());
`;
const EXPECTED = "[ 1, 4, 9 ]\n2000\n";

class SetupError extends Error {}

/** The JSON of the README's ```jsonc block whose first line is `// <label>`. */
function readmeJson<T>(readme: string, label: string): T {
  const blocks = readme.matchAll(/```jsonc\n([\s\S]*?)```/g);
  for (const [, body] of blocks) {
    const lines = body.split("\n");
    if (lines[0].trim() !== `// ${label}`) continue;
    return JSON.parse(lines.filter((line) => !line.trim().startsWith("//")).join("\n"));
  }
  throw new SetupError(`README.md has no \`\`\`jsonc block starting with "// ${label}"`);
}

/** The bare specifiers procpool's published code imports, with their deno.json targets. */
async function libraryImports(config: DenoConfig, files: string[]): Promise<Map<string, string>> {
  const used = new Map<string, string>();
  for (const file of files) {
    const code = (await Deno.readTextFile(file)).split("\n")
      .filter((line) => !/^\s*(\*|\/\/)/.test(line)).join("\n");
    for (const [, specifier] of code.matchAll(/(?:from|import)\s*\(?\s*"([^".][^"]*)"/g)) {
      const target = config.imports[specifier];
      if (target !== undefined) used.set(specifier, target);
    }
  }
  return used;
}

interface DenoConfig {
  imports: Record<string, string>;
  publish: { include: string[] };
}

async function listTs(path: string): Promise<string[]> {
  const info = await Deno.stat(path);
  if (info.isFile) return path.endsWith(".ts") ? [path] : [];
  const files: string[] = [];
  for await (const entry of Deno.readDir(path)) files.push(...await listTs(join(path, entry.name)));
  return files;
}

/** Copies procpool's published files into `dir`, as a user copying the repository would. */
async function copyLibrary(config: DenoConfig, dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const entry of config.publish.include) {
    const name = entry.replace(/\/$/, "");
    await copy(join(repo, name), join(dir, name));
  }
}

async function copy(from: string, to: string): Promise<void> {
  if ((await Deno.stat(from)).isFile) return await Deno.copyFile(from, to);
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    await copy(join(from, entry.name), join(to, entry.name));
  }
}

/**
 * A directory outside the repository, the same on every run from one checkout:
 * Deno's type-check cache is keyed by module path, so a fresh random
 * directory each time would type-check procpool from scratch (over 10 s here).
 */
async function projectsDir(): Promise<string> {
  const tmp = await Deno.makeTempDir({ prefix: "procpool_probe_" });
  await Deno.remove(tmp);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(repo));
  const id = [...new Uint8Array(digest).slice(0, 6)].map((b) => b.toString(16).padStart(2, "0"));
  const dir = join(tmp, "..", `procpool_setup_${id.join("")}`);
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir);
  return dir;
}

async function denoIn(cwd: string, ...args: string[]): Promise<Deno.CommandOutput> {
  return await new Deno.Command(deno, {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
}

async function runProgram(label: string, project: string, main: string): Promise<void> {
  const started = performance.now();
  for (const args of [["check", main], ["run", "--allow-env", main]]) {
    const output = await denoIn(project, ...args);
    const stdout = new TextDecoder().decode(output.stdout);
    if (!output.success || (args[0] === "run" && stdout !== EXPECTED)) {
      throw new SetupError(
        `${label}: \`deno ${args.join(" ")}\` failed (exit ${output.code})\n${stdout}${
          new TextDecoder().decode(output.stderr)
        }`,
      );
    }
  }
  console.log(`ok   ${label} (${Math.round(performance.now() - started)} ms)`);
}

async function main(): Promise<void> {
  const config: DenoConfig = JSON.parse(await Deno.readTextFile(join(repo, "deno.json")));
  const readme = await Deno.readTextFile(join(repo, "README.md"));
  // The library's own code: the examples are published too, but a user's
  // project need not map what only they import.
  const published = (await Promise.all(
    config.publish.include.filter((entry) => !entry.endsWith(".md") && entry !== "examples/")
      .map((entry) => listTs(join(repo, entry))),
  )).flat();
  const importMap = readmeJson<{ imports: Record<string, string> }>(
    readme,
    "deno.json (import map)",
  );
  const missing = [...await libraryImports(config, published)]
    .filter(([specifier]) => importMap.imports[specifier] === undefined)
    .map(([specifier, target]) => `"${specifier}": "${target}"`);
  if (missing.length > 0) {
    throw new SetupError(
      `README.md's import-map setup lacks what procpool imports; add:\n  ${missing.join(",\n  ")}`,
    );
  }
  const workspace = readmeJson<{ workspace: string[] }>(readme, "deno.json (workspace)");

  const root = await projectsDir();
  try {
    // The naive way: a copy and a relative import, no configuration.
    const naive = join(root, "naive");
    await copyLibrary(config, join(naive, "vendor/procpool"));
    await Deno.writeTextFile(
      join(naive, "main.ts"),
      PROGRAM.replaceAll('"@procpool/procpool', '"./vendor/procpool/mod.ts').replace(
        '"./vendor/procpool/mod.ts/testing"',
        '"./vendor/procpool/testing.ts"',
      ),
    );
    const failed = await denoIn(naive, "run", "--allow-env", "main.ts");
    const stderr = new TextDecoder().decode(failed.stderr);
    if (failed.success || !stderr.includes("not a dependency")) {
      throw new SetupError(
        `the naive setup was expected to fail with "not a dependency":\n${stderr}`,
      );
    }
    console.log("ok   a bare copy without configuration fails as the README says");

    const mapped = join(root, "import_map");
    const members = join(root, "workspace");
    await Promise.all([
      copyLibrary(config, join(mapped, "vendor/procpool")),
      copyLibrary(config, join(members, "vendor/procpool")),
    ]);
    await Deno.writeTextFile(join(mapped, "deno.json"), JSON.stringify(importMap, null, 2));
    await Deno.writeTextFile(join(mapped, "main.ts"), PROGRAM);
    await Deno.mkdir(join(members, "app"));
    await Deno.writeTextFile(join(members, "deno.json"), JSON.stringify(workspace, null, 2));
    await Deno.writeTextFile(join(members, "app/deno.json"), "{}\n");
    await Deno.writeTextFile(join(members, "app/main.ts"), PROGRAM);
    // Side by side: each is mostly a cold type check of procpool.
    await Promise.all([
      runProgram("import map pointing at the copy's mod.ts", mapped, "main.ts"),
      runProgram("workspace member", members, "app/main.ts"),
    ]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

if (import.meta.main) {
  try {
    await main();
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    console.error(`setup check failed: ${error.message}`);
    Deno.exit(1);
  }
}
