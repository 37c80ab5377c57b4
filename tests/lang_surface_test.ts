// A script holds its `lang` object, which also carries the process's
// cancellation state. Whatever a script can reach on it, at run time and not
// only in the types, must be LangL and nothing of procpool's internals (no way
// to request, inspect or hook a cancellation, nothing of AppL).
import { assertEquals, assertStrictEquals } from "@std/assert";
import type { LangL } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

const LANGL_MEMBERS = [
  "atomically",
  "delay",
  "evalIO",
  "fence",
  "getRandomInt",
  "logDebug",
  "logError",
  "logInfo",
  "logWarning",
  "modifyVar",
  "newVar",
  "now",
  "processId",
  "random",
  "readVar",
  "signal",
  "writeVar",
];

/** Every property name on `lang` and its prototypes, up to Object.prototype. */
function reachableNames(lang: LangL): string[] {
  const names = new Set<string>();
  for (let o: object | null = lang; o !== null && o !== Object.prototype;) {
    for (const key of Reflect.ownKeys(o)) names.add(String(key));
    o = Object.getPrototypeOf(o);
  }
  names.delete("constructor");
  return [...names].sort();
}

Deno.test("a script's lang exposes LangL and nothing else", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  await runtime.runApp(async (app) => {
    await t.step("in a process", async () => {
      const handle = await app.forkProcess((lang) => reachableNames(lang));
      assertEquals(await app.awaitResult(handle), LANGL_MEMBERS);
    });
    await t.step("in a forkAll item", async () => {
      assertEquals(await app.forkAll([0], (_, lang) => reachableNames(lang)), [LANGL_MEMBERS]);
    });
    await t.step("in evalLang", async () => {
      assertEquals(await app.evalLang((lang) => reachableNames(lang)), LANGL_MEMBERS);
    });
  });
});

// Every fork builds one LangL object, and V8 builds an instance slowly when a
// base class has fields to initialise (`#` fields always do): the cancellation
// state is the LangL class's own (src/lang/cancellation.ts), so its class has
// no base class at all (BENCHMARKS.md, "forkAll after 8626bf8").
Deno.test("a process's lang is an instance of a class without a base class", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  const protoOfProto = (lang: LangL) => Object.getPrototypeOf(Object.getPrototypeOf(lang));
  await runtime.runApp(async (app) => {
    const handle = await app.forkProcess((lang) => protoOfProto(lang));
    assertStrictEquals(await app.awaitResult(handle), Object.prototype);
    const [item] = await app.forkAll([0], (_, lang) => protoOfProto(lang));
    assertStrictEquals(item, Object.prototype);
  });
});
