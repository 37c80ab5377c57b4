// A script is called as a plain function (`this` undefined), and whatever of
// its result runs (a thenable's `then`) runs as the script, in the context
// the script left: the same for forkProcess (direct and queued), evalLang
// and forkAll. Review of c5694db: a script called by AsyncLocalStorage.run
// itself saw `this` null, and a thenable adopted in a second run lost what
// the script had set with `enterWith`.
import { AsyncLocalStorage } from "node:async_hooks";
import { assertEquals } from "@std/assert";
import { type AppL, Runtime } from "../mod.ts";

const request = new AsyncLocalStorage<string>();

type Kind = "forkProcess" | "queued forkProcess" | "evalLang" | "forkAll";
const KINDS: readonly Kind[] = ["forkProcess", "queued forkProcess", "evalLang", "forkAll"];

/** Runs `script` once the way `kind` runs it; returns its result. */
async function runAs(app: AppL, kind: Kind, script: () => unknown): Promise<unknown> {
  switch (kind) {
    case "forkProcess":
      return await app.awaitResult(await app.forkProcess(script));
    case "queued forkProcess": {
      let release = () => {};
      const held = await app.forkProcess(() => new Promise<void>((r) => release = r));
      const pending = app.forkProcess(script);
      release();
      await app.awaitResult(held);
      return await app.awaitResult(await pending);
    }
    case "evalLang":
      return await app.evalLang(script);
    case "forkAll":
      return (await app.forkAll([0], script))[0];
  }
}

Deno.test("a script is called with this undefined", async (t) => {
  for (const kind of KINDS) {
    await t.step(kind, async () => {
      await using runtime = new Runtime({ maxProcesses: 1 });
      const got = await runtime.runApp((app) =>
        runAs(app, kind, function (this: unknown) {
          return this === undefined ? "undefined" : this === null ? "null" : typeof this;
        })
      );
      assertEquals(got, "undefined");
    });
  }
});

Deno.test("a thenable's then runs in the context its script left", async (t) => {
  for (const kind of KINDS) {
    await t.step(kind, async () => {
      await using runtime = new Runtime({ maxProcesses: 1 });
      const seen: (string | undefined)[] = [];
      const script = () => {
        request.enterWith("script");
        return {
          then(resolve: (value: number) => void) {
            seen.push(request.getStore());
            resolve(1);
          },
        };
      };
      const got = await request.run(
        "forker",
        () => runtime.runApp((app) => runAs(app, kind, script)),
      );
      assertEquals(got, 1);
      assertEquals(seen, ["script"]);
    });
  }
});
