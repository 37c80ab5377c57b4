// Deadlocks on shared variables (API.md rule 12): a lock wait that would close
// a cycle rejects at once with DeadlockError in the process whose wait closed
// it, the others proceed, on every runtime.
import { assert, assertEquals, assertInstanceOf, assertRejects } from "@std/assert";
import fc from "fast-check";
import {
  type AppL,
  DeadlockError,
  type LangL,
  ProcessFailedError,
  Runtime,
  type SharedVar,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

const RUNS = Number(Deno.env.get("PROCPOOL_RUNS") ?? 200);

/** Each handle's outcome: the value, or the DeadlockError it failed with. */
async function outcomes(app: AppL, handles: { id: number }[]): Promise<unknown[]> {
  return await Promise.all(handles.map(async (h) => {
    try {
      return await app.awaitResult(h as never);
    } catch (error) {
      assertInstanceOf(error, ProcessFailedError);
      assertInstanceOf((error as ProcessFailedError).cause, DeadlockError);
      return (error as ProcessFailedError).cause;
    }
  }));
}

const runtimes = [
  ["the system clock", () => new Runtime({ maxProcesses: 4, seed: 1 })],
  ["a test runtime", () => createTestRuntime({ maxProcesses: 4, seed: 1 })],
] as const;

for (const [where, make] of runtimes) {
  Deno.test(`deadlocks are refused with DeadlockError on ${where}`, async (t) => {
    await using runtime = make();

    await t.step("atomically bodies each reading the other's variable", async () => {
      const [results, values] = await runtime.runApp(async (app) => {
        const [a, b] = [app.newVar(1), app.newVar(2)];
        const swapInto = (mine: SharedVar<number>, theirs: SharedVar<number>) =>
          app.forkProcess((lang) =>
            lang.atomically([mine], async (tx) => {
              await lang.delay(2); // both now hold their own variable
              tx.write(mine, tx.read(mine) + (await lang.readVar(theirs)));
              return "done";
            })
          );
        const handles = [await swapInto(a, b), await swapInto(b, a)];
        const results = await outcomes(app, handles);
        return [results, await app.evalLang((l) => Promise.all([l.readVar(a), l.readVar(b)]))];
      });
      // The second wait closed the cycle; the first process then got b.
      assertEquals(results[0], "done");
      const error = results[1] as DeadlockError;
      assertEquals(error.cycle, [{ processId: 2, varId: 1 }, { processId: 1, varId: 2 }]);
      assert(error.message.includes("process 2 would wait for SharedVar 1"), error.message);
      assert(error.message.includes("held by process 1, which waits for SharedVar 2"));
      assertEquals(values, [3, 2]); // the refused transaction wrote nothing
    });

    await t.step("nested modifyVar in opposite orders, with names", async () => {
      const results = await runtime.runApp(async (app) => {
        const [a, b] = [app.newVar(0), app.newVar(0)];
        const transfer = (from: SharedVar<number>, to: SharedVar<number>, name: string) =>
          app.forkProcess((lang) =>
            lang.modifyVar(from, async (x) => {
              await lang.delay(2);
              await lang.modifyVar(to, (y) => y + 1);
              return x - 1;
            }), { name });
        return await outcomes(app, [await transfer(a, b, "ab"), await transfer(b, a, "ba")]);
      });
      assertEquals(results[0], -1);
      assert((results[1] as Error).message.includes("process 4 (ba) would wait"));
      assert((results[1] as Error).message.includes("held by process 3 (ab)"));
    });

    await t.step("a cycle through three processes and an evalLang script", async () => {
      const results = await runtime.runApp(async (app) => {
        const vars = [app.newVar(0), app.newVar(0), app.newVar(0), app.newVar(0)];
        // Script i holds vars[i], then wants vars[(i + 1) % 4], each a little later.
        const step = (i: number) => (lang: LangL) =>
          lang.modifyVar(vars[i], async (x) => {
            await lang.delay(2 + i);
            await lang.modifyVar(vars[(i + 1) % 4], (y) => y + 1);
            return x + 1;
          });
        const handles = [];
        for (const i of [0, 1, 2]) handles.push(await app.forkProcess(step(i)));
        const inline = app.evalLang(step(3)).then((v) => v, (e) => e);
        return [...await outcomes(app, handles), await inline];
      });
      // The script's wait (the last, at 5 ms) closed the cycle.
      assertEquals(results.slice(0, 3), [1, 1, 1]);
      const error = results[3] as DeadlockError;
      assertInstanceOf(error, DeadlockError);
      assertEquals(error.cycle.map((s) => s.processId), [0, 5, 6, 7]);
      assert(error.message.startsWith("deadlock: an evalLang script would wait"), error.message);
    });

    await t.step("the re-entry rule still gives a TypeError, not a DeadlockError", async () => {
      await runtime.runApp(async (app) => {
        const v = app.newVar(0);
        await app.evalLang((lang) =>
          assertRejects(() => lang.modifyVar(v, () => lang.readVar(v)), TypeError, "already holds")
        );
      });
    });
  });
}

Deno.test("locking in one order never reports a deadlock", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 8, seed: 3 });
  const total = await runtime.runApp(async (app) => {
    const vars = Array.from({ length: 4 }, () => app.newVar(0));
    await app.forkAll(Array.from({ length: 40 }, (_, i) => i), async (i, lang) => {
      // Nested modifyVar in increasing id order, and atomically over all.
      const chain = vars.slice(i % 4);
      const nest = (k: number): Promise<number> =>
        lang.modifyVar(chain[k], async (x) => {
          await lang.delay(lang.getRandomInt(0, 3));
          if (k + 1 < chain.length) await nest(k + 1);
          return x + 1;
        });
      await nest(0);
      await lang.atomically(vars, (tx) => vars.forEach((v) => tx.write(v, tx.read(v) + 1)));
    });
    return await app.evalLang((lang) => Promise.all(vars.map((v) => lang.readVar(v))));
  });
  // Chains start at i % 4: var k is in the chains of starts 0..k, 10 each; plus 40 transactions.
  assertEquals(total, [50, 60, 70, 80]);
});

Deno.test("nested locks in any order never hang: every wait that would deadlock is refused", async () => {
  const chains = fc.array(
    fc.record({
      vars: fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 }),
      pause: fc.integer({ min: 0, max: 3 }),
    }),
    { minLength: 1, maxLength: 6 },
  );
  await fc.assert(
    fc.asyncProperty(chains, fc.integer(), async (programs, seed) => {
      await using runtime = createTestRuntime({ maxProcesses: 6, seed });
      const [done, values] = await runtime.runApp(async (app) => {
        const vars = Array.from({ length: 4 }, () => app.newVar(0));
        const handles = [];
        for (const { vars: order, pause } of programs) {
          handles.push(
            await app.forkProcess((lang) => {
              const nest = (k: number): Promise<number> =>
                lang.modifyVar(vars[order[k]], async (x) => {
                  await lang.delay(pause);
                  if (k + 1 < order.length) await nest(k + 1);
                  return x + 1;
                });
              return nest(0);
            }),
          );
        }
        const results = await outcomes(app, handles);
        const values = await app.evalLang((l) => Promise.all(vars.map((v) => l.readVar(v))));
        return [results.map((r) => !(r instanceof DeadlockError)), values];
      });
      // A process that completed incremented each var of its chain once; a
      // refused one rolled every level back.
      const expected = [0, 0, 0, 0];
      programs.forEach((p, i) => done[i] && p.vars.forEach((v) => expected[v]++));
      assertEquals(values, expected);
    }),
    { numRuns: RUNS },
  );
});
