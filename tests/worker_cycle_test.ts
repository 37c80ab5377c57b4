// What a side receives keeps its cycles and its shared objects when a
// variable reference in it is replaced: an object met again before the
// replacement (a cycle back to a container still being walked) pointed at
// the received original, whose reference was never replaced.
import { assert, assertEquals } from "@std/assert";
import { replaceDeep } from "../src/worker/_replace_deep.ts";
import { createTestRuntime } from "../testing.ts";

const scripts = new URL("./workers/review_scripts.ts", import.meta.url);

const marker = { marker: true };
const swap = (v: object) => (v === marker ? "SWAPPED" : undefined);

Deno.test("replaceDeep: a cycle met before the replacement", async (t) => {
  await t.step("in an object", () => {
    const o: Record<string, unknown> = {};
    o.self = o;
    o.m = marker;
    const back = replaceDeep(o, swap) as Record<string, unknown>;
    assert(back !== o, "copied");
    assert(back.self === back, "the copy holds itself");
    assertEquals(back.m, "SWAPPED");
  });
  await t.step("in an array", () => {
    const a: unknown[] = [];
    a.push(a, marker);
    const back = replaceDeep(a, swap) as unknown[];
    assert(back[0] === back, "the copy holds itself");
    assertEquals(back[1], "SWAPPED");
  });
  await t.step("through a Map and a Set", () => {
    const o: Record<string, unknown> = {};
    o.map = new Map([["o", o]]);
    o.set = new Set([o]);
    o.m = marker;
    const back = replaceDeep(o, swap) as Record<string, unknown>;
    assert((back.map as Map<string, unknown>).get("o") === back);
    assert((back.set as Set<unknown>).has(back));
    assertEquals(back.m, "SWAPPED");
  });
  await t.step("an object shared by two holders stays one", () => {
    const shared = { m: marker };
    const back = replaceDeep({ a: shared, b: shared }, swap) as Record<string, { m: unknown }>;
    assert(back.a === back.b);
    assertEquals(back.a.m, "SWAPPED");
  });
  await t.step("an object held many times, with a replacement in it", () => {
    const shared = { m: marker };
    const back = replaceDeep(new Array(200_000).fill(shared), swap) as { m: unknown }[];
    assert(back[0] === back[199_999]);
    assertEquals(back[0].m, "SWAPPED");
  });
  await t.step("nothing to replace: the value itself", () => {
    const o: Record<string, unknown> = { list: [1, { x: 2 }] };
    o.self = o;
    assert(replaceDeep(o, swap) === o);
  });
});

for (const isolation of ["thread", "process"] as const) {
  Deno.test(`forkWorker (${isolation}): a cycle before a variable survives both ways`, async () => {
    await using runtime = createTestRuntime({ maxProcesses: 1, workers: 1 });
    const out = await runtime.runApp(async (app) => {
      const v = app.newVar(5);
      const input: Record<string, unknown> = {};
      input.self = input;
      input.v = v;
      const back = await app.awaitResult(
        await app.forkWorker<unknown, Record<string, unknown>>(scripts, input, {
          export: "cycleBeforeVar",
          isolation,
        }),
      );
      return [back.inputKept, back.self === back, back.v === v];
    });
    assertEquals(out, [true, true, true]);
  });
}
