// The slot of the async context that the nested-fork guard keeps its mark
// in. Both kinds (Deno's context primitives, and the AsyncLocalStorage
// fallback) must follow a script wherever an AsyncLocalStorage value would:
// across awaits, timers, other AsyncLocalStorage runs and snapshots.
import { AsyncLocalStorage } from "node:async_hooks";
import { assert, assertEquals } from "@std/assert";
import {
  type ContextSlot,
  contextSlot,
  isCoreSlot,
  storageSlot,
} from "../src/app/_script_context.ts";

const other = new AsyncLocalStorage<string>();

function slots(): [string, ContextSlot<object>][] {
  return [["Deno's context primitives", contextSlot<object>({})], [
    "AsyncLocalStorage",
    storageSlot(),
  ]];
}

Deno.test("a context slot follows its value like an AsyncLocalStorage", async (t) => {
  await t.step("on this Deno, the guard uses the primitives (the self-test passes)", () => {
    assert(isCoreSlot(contextSlot<object>({})));
    assert(!isCoreSlot(storageSlot()));
  });
  for (const [label, slot] of slots()) {
    await t.step(`${label}: across awaits and timers, and not outside`, async () => {
      const mark = {};
      const seen = await slot.run(mark, async () => {
        const first = slot.get();
        await Promise.resolve();
        const second = slot.get();
        await new Promise((resolve) => setTimeout(resolve, 0));
        return [first, second, slot.get()];
      });
      assertEquals(seen.map((value) => value === mark), [true, true, true]);
      assertEquals(slot.get(), undefined);
    });
    await t.step(`${label}: inside and around another AsyncLocalStorage`, async () => {
      const mark = {};
      const seen = await other.run("outer", () =>
        slot.run(mark, async () => {
          await null;
          const inner = await other.run("inner", async () => {
            await null;
            return [other.getStore(), slot.get() === mark];
          });
          other.enterWith("entered");
          await null;
          return [...inner, other.getStore(), slot.get() === mark];
        }));
      assertEquals(seen, ["inner", true, "entered", true]);
      assertEquals(other.getStore(), undefined);
    });
    await t.step(`${label}: a nested run hides the value and restores it`, () => {
      const mark = {};
      const seen = slot.run(mark, () => [slot.run(undefined, () => slot.get()), slot.get()]);
      assertEquals(seen, [undefined, mark]);
    });
    await t.step(`${label}: a snapshot taken inside keeps the value`, () => {
      const mark = {};
      const snapshot = slot.run(mark, () => AsyncLocalStorage.snapshot());
      assertEquals(slot.get(), undefined);
      assert(snapshot(() => slot.get()) === mark);
    });
    await t.step(`${label}: a throwing function still restores the context`, () => {
      const mark = {};
      try {
        slot.run(mark, () => {
          throw new Error("boom");
        });
      } catch {
        // expected
      }
      assertEquals(slot.get(), undefined);
    });
  }
});
