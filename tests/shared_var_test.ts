// SharedVar: a FIFO promise mutex per variable, no lost updates, re-entry
// refused with TypeError, and variables checked to be ours.
import { assert, assertEquals, assertRejects } from "@std/assert";
import { type LangL, ProcessCancelledError, type SharedVar } from "../mod.ts";
import { createTestRuntime } from "../testing.ts";

/** Holds `v`'s lock (through modifyVar) until `release` resolves. */
function holdLock<T>(lang: LangL, v: SharedVar<T>, release: Promise<void>): Promise<T> {
  return lang.modifyVar(v, async (x) => {
    await release;
    return x;
  });
}

Deno.test("lock waiters are served first come, first served", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 10, seed: 1 });

  /** Holds `v` for 1000 ms of virtual time, from time 0. */
  function occupy<T>(lang: LangL, v: SharedVar<T>): Promise<T> {
    return lang.modifyVar(v, async (x) => {
      await lang.delay(1000);
      return x;
    });
  }

  await t.step("modifyVar, atomically and readVar queue together", async () => {
    const reads: Record<number, number[]> = {};
    const final = await runtime.runApp(async (app) => {
      const v = app.newVar<number[]>([]);
      await app.forkProcess((lang) => occupy(lang, v));
      // Process i+1 starts waiting at 100 - 10i: arrival order is the reverse
      // of fork (and id) order.
      for (let i = 1; i <= 8; i++) {
        await app.forkProcess(async (lang) => {
          await lang.delay(100 - 10 * i);
          const me = lang.processId;
          if (i % 3 === 0) await lang.modifyVar(v, (x) => [...x, me]);
          else if (i % 3 === 1) {
            await lang.atomically([v], (tx) => tx.write(v, [...tx.read(v), me]));
          } else reads[me] = await lang.readVar(v);
        });
      }
      return v;
    }).then((v) => runtime.runApp((app) => app.evalLang((lang) => lang.readVar(v))));
    assertEquals(final, [8, 7, 5, 4, 2]);
    assertEquals(reads, { 9: [], 6: [8, 7], 3: [8, 7, 5, 4] });
  });

  await t.step("writeVar and readVar queue together", async () => {
    const { seen, final } = await runtime.runApp(async (app) => {
      const v = app.newVar("initial");
      await app.forkProcess((lang) => occupy(lang, v));
      const reader = await app.forkProcess(async (lang) => {
        await lang.delay(20);
        return await lang.readVar(v);
      });
      await app.forkProcess(async (lang) => {
        await lang.delay(30);
        await lang.writeVar(v, "last");
      });
      await app.forkProcess(async (lang) => {
        await lang.delay(10);
        await lang.writeVar(v, "first");
      });
      const seen = await app.awaitResult(reader);
      return { seen, final: await app.evalLang((lang) => lang.readVar(v)) };
    });
    assertEquals({ seen, final }, { seen: "first", final: "last" });
  });
});

Deno.test("modifyVar's async function holds the lock across its awaits", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 4, seed: 1 });
  const order: string[] = [];
  const final = await runtime.runApp(async (app) => {
    const v = app.newVar(0);
    await app.forkProcess((lang) =>
      lang.modifyVar(v, async (x) => {
        order.push("modify starts");
        await lang.delay(100);
        order.push("modify ends");
        return x + 1;
      })
    );
    await app.forkProcess(async (lang) => {
      await lang.delay(10);
      const value = await lang.readVar(v);
      order.push(`read ${value} at ${lang.now()}`);
    });
    await app.forkProcess(async (lang) => {
      await lang.delay(20);
      await lang.writeVar(v, 10);
      order.push(`write at ${lang.now()}`);
    });
    await app.forkProcess(async (lang) => {
      await lang.delay(30);
      await lang.modifyVar(v, (x) => x * 2);
      order.push(`double at ${lang.now()}`);
    });
    return v;
  }).then((v) => runtime.runApp((app) => app.evalLang((lang) => lang.readVar(v))));
  assertEquals(order, [
    "modify starts",
    "modify ends",
    "read 1 at 100",
    "write at 100",
    "double at 100",
  ]);
  assertEquals(final, 20);
});

Deno.test("modifyVar from many processes never loses an update", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 20, seed: 11 });
  const total = await runtime.runApp(async (app) => {
    const counter = app.newVar(0);
    await app.forkAll(Array.from({ length: 100 }, (_, i) => i), async (_, lang) => {
      for (let k = 0; k < 10; k++) {
        await lang.delay(lang.getRandomInt(0, 3));
        await lang.modifyVar(counter, async (c) => {
          await lang.delay(lang.getRandomInt(0, 2));
          return c + 1;
        });
      }
    });
    return await app.evalLang((lang) => lang.readVar(counter));
  });
  assertEquals(total, 1000);
});

Deno.test("re-entering a held variable throws TypeError instead of deadlocking", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });
  // A deadlock would hang the test; the virtual timeout turns it into a failure.
  const guard = { timeoutMs: 60_000 };

  /** Each var operation on `v` attempted from inside a section that holds it. */
  async function tryAll(lang: LangL, v: SharedVar<number>, other: SharedVar<number>) {
    await assertRejects(() => lang.readVar(v), TypeError, "already holds");
    await assertRejects(() => lang.writeVar(v, 99), TypeError, "already holds");
    await assertRejects(() => lang.modifyVar(v, (x) => x + 99), TypeError, "already holds");
    await assertRejects(() => lang.atomically([other, v], () => {}), TypeError, "already holds");
    // Other variables stay usable.
    await lang.writeVar(other, (await lang.readVar(other)) + 1);
  }

  await t.step("inside modifyVar's function", async () => {
    const values = await runtime.runApp(async (app) => {
      const [v, other] = [app.newVar(1), app.newVar(0)];
      const h = await app.forkProcess((lang) =>
        lang.modifyVar(v, async (x) => {
          await tryAll(lang, v, other);
          return x + 1;
        }), guard);
      await app.awaitResult(h);
      return await app.evalLang((lang) => Promise.all([lang.readVar(v), lang.readVar(other)]));
    });
    assertEquals(values, [2, 1]);
  });

  await t.step("inside atomically's body", async () => {
    const values = await runtime.runApp(async (app) => {
      const [v, w, other] = [app.newVar(1), app.newVar(5), app.newVar(0)];
      const h = await app.forkProcess((lang) =>
        lang.atomically([v, w], async (tx) => {
          await tryAll(lang, v, other);
          await assertRejects(() => lang.readVar(w), TypeError);
          tx.write(v, tx.read(v) + 1);
        }), guard);
      await app.awaitResult(h);
      return await app.evalLang((lang) =>
        Promise.all([lang.readVar(v), lang.readVar(w), lang.readVar(other)])
      );
    });
    assertEquals(values, [2, 5, 1]);
  });
});

Deno.test("variables are checked", async (t) => {
  await using runtime = createTestRuntime({ maxProcesses: 1, seed: 1 });

  await t.step("a variable from another runtime is a TypeError", async () => {
    await using other = createTestRuntime({ maxProcesses: 1, seed: 1 });
    const foreign = await other.runApp((app) => Promise.resolve(app.newVar(1)));
    await runtime.runApp((app) =>
      app.evalLang(async (lang) => {
        const own = lang.newVar(0);
        assertEquals(own.id, foreign.id); // same id, different runtime
        await assertRejects(() => lang.readVar(foreign), TypeError, "another runtime");
        await assertRejects(() => lang.writeVar(foreign, 2), TypeError, "another runtime");
        await assertRejects(() => lang.modifyVar(foreign, (x) => x), TypeError, "another runtime");
        await assertRejects(() => lang.atomically([own, foreign], () => {}), TypeError);
      })
    );
    const value = await other.runApp((app) => app.evalLang((lang) => lang.readVar(foreign)));
    assertEquals(value, 1);
  });

  await t.step("something that is not a variable is a TypeError", async () => {
    await runtime.runApp((app) =>
      app.evalLang(async (lang) => {
        const fakes = [{ id: 1 }, null, undefined, 42, "v"] as unknown as SharedVar<number>[];
        for (const fake of fakes) {
          await assertRejects(() => lang.readVar(fake), TypeError, "SharedVar");
          await assertRejects(() => lang.writeVar(fake, 1), TypeError, "SharedVar");
          await assertRejects(() => lang.modifyVar(fake, (x) => x), TypeError, "SharedVar");
          await assertRejects(() => lang.atomically([fake], () => {}), TypeError, "SharedVar");
        }
        const v = lang.newVar(0);
        // @ts-expect-error: not an array
        await assertRejects(() => lang.atomically(v, () => {}), TypeError);
        // @ts-expect-error: not a function
        await assertRejects(() => lang.modifyVar(v, 1), TypeError);
        // @ts-expect-error: not a function
        await assertRejects(() => lang.atomically([v], "body"), TypeError);
      })
    );
  });

  await t.step("ids are distinct and increasing within a runtime", async () => {
    const ids = await runtime.runApp(async (app) => {
      const first = app.newVar(0).id;
      const rest = await app.evalLang((lang) => [lang.newVar(0).id, lang.newVar(0).id]);
      return [first, ...rest, app.newVar(0).id];
    });
    assert(ids.every((id, i) => i === 0 || id > ids[i - 1]), `ids ${ids}`);
  });
});

Deno.test("a pending lock wait rejects at once on cancellation", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 6, seed: 1 });
  const release = Promise.withResolvers<void>();
  const events: string[] = [];
  const value = await runtime.runApp(async (app) => {
    const v = app.newVar(0);
    const holder = await app.forkProcess((lang) => holdLock(lang, v, release.promise));
    const waiters = [
      (lang: LangL) => lang.readVar(v),
      (lang: LangL) => lang.writeVar(v, 100),
      (lang: LangL) => lang.modifyVar(v, (x) => x + 100),
      (lang: LangL) => lang.atomically([v], (tx) => tx.write(v, 100)),
    ];
    const handles = [];
    for (const [i, op] of waiters.entries()) {
      handles.push(
        await app.forkProcess(async (lang) => {
          await op(lang).catch((e) => {
            events.push(`${i} ${e instanceof ProcessCancelledError ? "cancelled" : e}`);
            throw e;
          });
          events.push(`${i} got the lock`);
        }),
      );
    }
    // A waiter that stays: the cancelled ones must have left the queue.
    const survivor = await app.forkProcess((lang) => lang.modifyVar(v, (x) => x + 1));
    for (const h of handles) h.cancel();
    for (const h of handles) {
      await assertRejects(() => app.awaitResult(h), ProcessCancelledError);
    }
    events.push(`holder ${holder.status}`);
    release.resolve();
    await app.awaitResult(holder);
    assertEquals(await app.awaitResult(survivor), 1);
    return await app.evalLang((lang) => lang.readVar(v));
  });
  assertEquals(events, [
    "0 cancelled",
    "1 cancelled",
    "2 cancelled",
    "3 cancelled",
    "holder running",
  ]);
  assertEquals(value, 1);
});

Deno.test("modifyVar writes nothing when f throws or the process is cancelled", async () => {
  await using runtime = createTestRuntime({ maxProcesses: 2, seed: 1 });
  const value = await runtime.runApp(async (app) => {
    const v = app.newVar(1);
    await app.evalLang((lang) =>
      assertRejects(() =>
        lang.modifyVar(v, () => {
          throw new SyntaxError("bad");
        }), SyntaxError)
    );
    const gate = Promise.withResolvers<void>();
    const h = await app.forkProcess((lang) =>
      lang.modifyVar(v, async (x) => {
        await gate.promise;
        return x + 10;
      })
    );
    h.cancel();
    gate.resolve();
    await assertRejects(() => app.awaitResult(h), ProcessCancelledError);
    // The lock was released in both cases.
    return await app.evalLang((lang) => lang.modifyVar(v, (x) => x * 2));
  });
  assertEquals(value, 2);
});
