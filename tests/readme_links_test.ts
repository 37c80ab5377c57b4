// README is published with the package (deno.json publish.include), so every
// file it links to must be published too, or the link is dead on the
// package's page.
import { assert, assertEquals } from "@std/assert";

const root = new URL("../", import.meta.url);

Deno.test("every file README links to exists and is in the published package", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", root));
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  const include: string[] = config.publish.include;
  const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1])
    .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith("#"))
    .map((target) => target.replace(/#.*$/, ""));
  assert(links.length > 0, "README has relative links (else this test checks nothing)");
  const unpublished = links.filter((target) =>
    !include.some((entry) => entry.endsWith("/") ? target.startsWith(entry) : target === entry)
  );
  assertEquals(unpublished, [], "README links to files that deno publish leaves out");
  for (const target of links) await Deno.stat(new URL(target, root));
});
