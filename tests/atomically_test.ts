// atomically: all-or-nothing writes, rollback on throw and on cancellation,
// locks always released, lock ordering that cannot deadlock.
import { assert, assertEquals, assertInstanceOf, assertRejects, assertThrows } from "@std/assert";
import {
  type AppL,
  type LangL,
  ProcessCancelledError,
  type SharedVar,
  type Transaction,
} from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

function readAll(app: AppL, vars: SharedVar<number>[]): Promise<number[]> {
  return app.evalLang((lang) => Promise.all(vars.map((v) => lang.readVar(v))));
}

/** Proves the locks are free: another process locks every var and bumps it. */
async function bumpAll(app: AppL, vars: SharedVar<number>[]): Promise<void> {
  const h = await app.forkProcess((lang) =>
    lang.atomically(vars, (tx) => vars.forEach((v) => tx.write(v, tx.read(v) + 1000)))
  );
  await app.awaitResult(h);
}

Deno.test("atomically", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 4, seed: 1 });

  await t.step("commits only when the body returns, and sees its own writes", async () => {
    const seen: number[] = [];
    const values = await runtime.runApp(async (app) => {
      const [a, b] = [app.newVar(10), app.newVar(20)];
      const h = await app.forkProcess((lang) =>
        lang.atomically([b, a], async (tx) => {
          tx.write(a, 11);
          seen.push(tx.read(a));
          await lang.delay(50);
          tx.write(a, tx.read(a) + 1);
          tx.write(b, tx.read(b) + tx.read(a));
          return "done";
        })
      );
      assertEquals(await app.awaitResult(h), "done");
      return await readAll(app, [a, b]);
    });
    assertEquals(seen, [11]);
    assertEquals(values, [12, 32]);
  });

  await t.step("rolls back and releases its locks when the body throws", async () => {
    const values = await runtime.runApp(async (app) => {
      const [a, b] = [app.newVar(1), app.newVar(2)];
      await app.evalLang((lang) =>
        assertRejects(
          () =>
            lang.atomically([a, b], async (tx) => {
              tx.write(a, 100);
              await lang.delay(1);
              tx.write(b, 200);
              throw new RangeError("insufficient funds");
            }),
          RangeError,
          "insufficient funds",
        )
      );
      await bumpAll(app, [a, b]);
      return await readAll(app, [a, b]);
    });
    assertEquals(values, [1001, 1002]);
  });

  await t.step("rolls back when cancelled during a body that then returns", async () => {
    const gate = Promise.withResolvers<void>();
    const values = await runtime.runApp(async (app) => {
      const [a, b] = [app.newVar(1), app.newVar(2)];
      let bodyEnded = false;
      const h = await app.forkProcess((lang) =>
        lang.atomically([a, b], async (tx) => {
          tx.write(a, 100);
          await gate.promise;
          tx.write(b, 200);
          bodyEnded = true;
          return "returned anyway";
        })
      );
      h.cancel("stop");
      gate.resolve();
      const error = await assertRejects(() => app.awaitResult(h), ProcessCancelledError);
      assertEquals(error.cause, "stop");
      assert(bodyEnded);
      await bumpAll(app, [a, b]);
      return await readAll(app, [a, b]);
    });
    assertEquals(values, [1001, 1002]);
  });

  await t.step("a cancelled lock wait releases the locks already taken", async () => {
    const release = Promise.withResolvers<void>();
    const values = await runtime.runApp(async (app) => {
      const [a, b] = [app.newVar(1), app.newVar(2)];
      // Another process holds b, so an atomically on [a, b] takes a and waits for b.
      const holder = await app.forkProcess((lang) =>
        lang.modifyVar(b, async (x) => (await release.promise, x))
      );
      const waiter = await app.forkProcess((lang) =>
        lang.atomically([a, b], (tx) => tx.write(a, 100))
      );
      waiter.cancel();
      await assertRejects(() => app.awaitResult(waiter), ProcessCancelledError);
      // a is free while b is still held.
      await app.evalLang((lang) => lang.modifyVar(a, (x) => x + 1000));
      assertEquals(holder.status, "running");
      release.resolve();
      await app.awaitResult(holder);
      await bumpAll(app, [a, b]);
      return await readAll(app, [a, b]);
    });
    assertEquals(values, [2001, 1002]);
  });

  await t.step("a transaction used after its body finished throws TypeError", async () => {
    await runtime.runApp(async (app) => {
      const a = app.newVar(1);
      const txs = await app.evalLang(async (lang) => {
        const kept: Transaction[] = [];
        await lang.atomically([a], (tx) => void kept.push(tx));
        await lang.atomically([a], (tx) => {
          kept.push(tx);
          throw new Error("x");
        }).catch(() => {});
        return kept;
      });
      for (const tx of txs) {
        assertThrows(() => tx.read(a), TypeError, "after");
        assertThrows(() => tx.write(a, 5), TypeError, "after");
      }
      assertEquals(await readAll(app, [a]), [1]);
    });
  });

  await t.step("a variable not in the list is a TypeError", async () => {
    const values = await runtime.runApp(async (app) => {
      const [a, b] = [app.newVar(1), app.newVar(2)];
      await app.evalLang((lang) =>
        lang.atomically([a], (tx) => {
          assertThrows(() => tx.read(b), TypeError, "not one of the variables");
          assertThrows(() => tx.write(b, 9), TypeError, "not one of the variables");
          tx.write(a, 3);
        })
      );
      return await readAll(app, [a, b]);
    });
    assertEquals(values, [3, 2]);
  });

  await t.step("an empty or repeated list of variables is fine", async () => {
    const values = await runtime.runApp(async (app) => {
      const a = app.newVar(1);
      const results = await app.evalLang(async (lang) => [
        await lang.atomically([], () => "empty"),
        await lang.atomically([a, a], (tx) => (tx.write(a, tx.read(a) + 1), "twice")),
      ]);
      return [...results, ...await readAll(app, [a])];
    });
    assertEquals(values, ["empty", "twice", 2]);
  });
});

Deno.test("opposite lock orders never deadlock", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 4, seed: 9 });
  const values = await runtime.runApp(async (app) => {
    const [a, b] = [app.newVar(0), app.newVar(0)];
    const swing = (first: SharedVar<number>, second: SharedVar<number>) => async (lang: LangL) => {
      for (let i = 0; i < 200; i++) {
        await lang.atomically([first, second], async (tx) => {
          tx.write(first, tx.read(first) + 1);
          await lang.delay(lang.getRandomInt(0, 2));
          tx.write(second, tx.read(second) + 1);
        });
      }
    };
    // The timeout turns a deadlock into a failure instead of a hung test.
    const guard = { timeoutMs: 1_000_000 };
    const handles = [
      await app.forkProcess(swing(a, b), guard),
      await app.forkProcess(swing(b, a), guard),
      await app.forkProcess(swing(a, b), guard),
      await app.forkProcess(swing(b, a), guard),
    ];
    for (const h of handles) await app.awaitResult(h);
    return await readAll(app, [a, b]);
  });
  assertEquals(values, [800, 800]);
});

Deno.test("random transfers conserve the total", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 8, seed: 2024 });
  let refused = 0;
  const balances = await runtime.runApp(async (app) => {
    const accounts = Array.from({ length: 10 }, () => app.newVar(100));
    await app.forkAll(Array.from({ length: 50 }, (_, i) => i), async (_, lang) => {
      for (let k = 0; k < 20; k++) {
        const from = accounts[lang.getRandomInt(0, 9)];
        const to = accounts[lang.getRandomInt(0, 9)];
        const amount = lang.getRandomInt(1, 60);
        await lang.atomically([from, to], async (tx) => {
          tx.write(from, tx.read(from) - amount);
          await lang.delay(lang.getRandomInt(0, 3));
          tx.write(to, tx.read(to) + amount);
          if (tx.read(from) < 0) throw new RangeError("insufficient funds");
        }).catch((e) => {
          assertInstanceOf(e, RangeError);
          refused++;
        });
      }
    }, { timeoutMs: 1_000_000 });
    return await readAll(app, accounts);
  });
  assertEquals(balances.reduce((x, y) => x + y, 0), 1000);
  assert(balances.every((x) => x >= 0), `balances ${balances}`);
  assert(refused > 0, "no transfer was ever refused: the rollback path went untested");
});
