// The book's layers, as the source tree must show them: each directory of
// src/ imports only from the layers below it (type imports included), so a
// LangL script cannot reach fork even by import, and the services under the
// runtime facade never reach back up. Language interfaces never import their
// interpreters.
import { assertEquals } from "@std/assert";

const SRC = new URL("../src/", import.meta.url);

/** What each layer may import, besides its own directory and src/'s top-level files. */
const ALLOWED: Record<string, string[]> = {
  errors: [],
  runtime: ["errors"],
  lang: ["errors", "runtime"],
  worker: ["errors", "runtime", "lang"],
  app: ["errors", "runtime", "lang", "worker"],
  facade: ["errors", "runtime", "lang", "worker", "app"],
  testing: ["errors", "runtime", "lang", "worker", "app", "facade"],
};

/** Interface file -> interpreter files it must not import. */
const INTERFACES: Record<string, string[]> = {
  "lang/lang.ts": ["lang/interpreter.ts"],
  "app/app.ts": ["app/scope.ts", "app/process.ts"],
  "app/app_options.ts": ["app/scope.ts", "app/process.ts"],
};

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^"';]*?from\s*"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g;

async function* sourceFiles(dir: URL): AsyncGenerator<URL> {
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) yield* sourceFiles(url);
    else if (entry.name.endsWith(".ts")) yield url;
  }
}

/** The src-relative paths `file` imports (relative specifiers only). */
async function importsOf(file: URL): Promise<string[]> {
  const text = await Deno.readTextFile(file);
  const found: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2];
    if (!specifier.startsWith(".")) continue;
    found.push(new URL(specifier, file).href.slice(SRC.href.length));
  }
  return found;
}

Deno.test("each layer imports only the layers below it", async () => {
  const violations: string[] = [];
  for await (const file of sourceFiles(SRC)) {
    const path = file.href.slice(SRC.href.length);
    const layer = path.includes("/") ? path.slice(0, path.indexOf("/")) : undefined;
    for (const target of await importsOf(file)) {
      const targetLayer = target.includes("/") ? target.slice(0, target.indexOf("/")) : undefined;
      if (layer === undefined || targetLayer === undefined || targetLayer === layer) continue;
      const allowed = ALLOWED[layer];
      if (allowed === undefined) violations.push(`${path}: layer ${layer} is not in ALLOWED`);
      else if (!allowed.includes(targetLayer)) violations.push(`${path} imports ${target}`);
    }
    for (const interpreter of INTERFACES[path] ?? []) {
      if ((await importsOf(file)).includes(interpreter)) {
        violations.push(`${path} (an interface) imports its interpreter ${interpreter}`);
      }
    }
  }
  assertEquals(violations, []);
});
