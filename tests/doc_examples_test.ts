// The JSDoc examples are meant to be copied: they import the package by its
// published names, never by paths inside this repository.
import { assertEquals } from "@std/assert";

const root = new URL("../", import.meta.url);

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(new URL(dir, root))) {
    const path = `${dir}${entry.name}`;
    // The published code only: root modules and src/.
    if (entry.isDirectory) {
      if (dir !== "" || entry.name === "src") yield* sources(`${path}/`);
    } else if (path.endsWith(".ts")) yield path;
  }
}

Deno.test("every @example imports @procpool/procpool by name, not by a relative path", async () => {
  const relative: string[] = [];
  let examples = 0;
  for await (const path of sources("")) {
    const text = await Deno.readTextFile(new URL(path, root));
    text.split("\n").forEach((line, i) => {
      if (!/^\s*\*\s*import\b/.test(line)) return;
      examples++;
      if (/\bfrom\s+["']\.\.?\//.test(line)) relative.push(`${path}:${i + 1}`);
    });
  }
  assertEquals(relative, []);
  if (examples === 0) throw new Error("found no example imports: the scan is broken");
});
