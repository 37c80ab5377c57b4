// Interleaving properties: random programs of forks, awaits, cancels,
// timeouts, failures, nested scopes and shared-variable updates, run under
// interleavings chosen by fast-check's scheduler. The number of runs per
// property comes from PROCPOOL_RUNS (`deno task test:long` runs 10 000).
import fc from "fast-check";
import { assert, assertEquals } from "@std/assert";
import { setImmediate } from "node:timers";
import { backoff, fifo, Runtime } from "../mod.ts";
import { VirtualClock } from "../testing.ts";
import { ACCOUNTS, type Program, programArb, SIGNALS } from "./_program_gen.ts";
import { ScopeModel, violate, type World } from "./_program_world.ts";
import { statusOf, verifyScope } from "./_program_check.ts";
import { runBody } from "./_program_run.ts";
import { trackListeners } from "./_listeners.ts";

const RUNS = Number(Deno.env.get("PROCPOOL_RUNS") ?? 400);

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

let current: World | undefined;
// Runs before the scheduler releases each task, so the invariants are
// checked between any two steps of the program.
const schedulerArb = fc.scheduler({
  act: async (f) => {
    current?.check("between steps");
    await f();
  },
});

function makeWorld(s: fc.Scheduler, prog: Program, rt: Runtime, vars: {
  counter: World["counter"];
  accounts: World["accounts"];
}): World {
  const w: World = {
    s,
    rt,
    fifo: prog.policy === "fifo",
    ...vars,
    total: ACCOUNTS * (ACCOUNTS + 1) * 5,
    controllers: Array.from({ length: SIGNALS }, () => new AbortController()),
    runs: [],
    runsByFork: new Map(),
    increments: [],
    handles: [],
    queued: [],
    nextFork: 0,
    nextStart: 0,
    violations: [],
    disposal: undefined,
    check(where: string) {
      const st = rt.stats();
      const stopped = st.succeeded + st.failed + st.cancelled;
      if (st.active < 0 || st.active > st.max || st.waiting < 0) {
        violate(w, `${where}: stats out of bounds ${JSON.stringify(st)}`);
      }
      if (st.active !== st.started - stopped) {
        violate(w, `${where}: active lags ${JSON.stringify(st)}`);
      }
      // A slot handed over by another process's stop counts as started at
      // once; its script runs one reaction later, in its forker's context.
      // So a script may lag its count, never the other way round (the end
      // check below requires every started process to have run).
      if (st.started < w.runs.length) {
        violate(w, `${where}: started ${st.started}, ${w.runs.length} ran`);
      }
      if (w.fifo && st.waiting > 0 && st.active < st.max) {
        violate(w, `${where}: fifo has waiters and a free slot ${JSON.stringify(st)}`);
      }
      for (const entry of w.handles) {
        const now = entry.h.status;
        if (entry.last !== "running" && now !== entry.last) {
          violate(w, `${where}: process ${entry.h.id} went from ${entry.last} to ${now}`);
        }
        if (now !== "running" && !entry.run.ended) {
          violate(w, `${where}: process ${entry.h.id} is ${now} before it stopped`);
        }
        entry.last = now;
      }
    },
  };
  return w;
}

/** Runs `prog` to its end under `s`; returns the world for the final checks. */
async function execute(s: fc.Scheduler, prog: Program) {
  const clock = new VirtualClock();
  const wait = prog.policy === "fifo" ? fifo() : backoff({ initialMs: 1, maxMs: 4 });
  const rt = new Runtime({ maxProcesses: prog.max, wait, clock, seed: prog.seed });
  const vars = await rt.runApp((app) =>
    Promise.resolve({
      counter: app.newVar(0),
      accounts: Array.from({ length: ACCOUNTS }, (_, i) => app.newVar(10 * (i + 1))),
    })
  );
  const w = current = makeWorld(s, prog, rt, vars);
  const listeners = w.controllers.map((c) => trackListeners(c.signal, true));
  let finished = false;
  let hang!: (error: Error) => void;
  const hung = new Promise<never>((_, reject) => hang = reject);
  const program = (async () => {
    const root = new ScopeModel(prog.failFast, "root");
    let outcome: { value?: unknown; error?: unknown };
    try {
      const value = await rt.runApp((app) => runBody(w, app, prog.actions, root), {
        failFast: prog.failFast,
      });
      outcome = { value };
    } catch (error) {
      outcome = { error };
    }
    verifyScope(w, root, outcome);
    if (w.disposal !== undefined) {
      await w.disposal;
      return undefined;
    }
    // A fresh app reads every variable: this hangs if a lock was left held.
    return await rt.runApp((app) =>
      app.evalLang((lang) =>
        Promise.all([vars.counter, ...vars.accounts].map((v) => lang.readVar(v)))
      )
    );
  })();
  // Virtual time moves one millisecond per tick, and ticks compete with the
  // program's steps, so timeouts and backoff sleeps land anywhere in between.
  const ticker = (async () => {
    let idle = 0;
    while (!finished) {
      await s.schedule(Promise.resolve(), "tick");
      if (finished) return;
      w.check("tick");
      if (clock.pending > 0) {
        idle = 0;
        await clock.advance(1);
      } else if (s.count() > 0) {
        idle = 0;
      } else {
        await macrotask();
        if (!finished && clock.pending === 0 && s.count() === 0 && ++idle > 3) {
          return hang(new Error(`the program hung with ${JSON.stringify(rt.stats())}`));
        }
      }
    }
  })();
  let values: number[] | undefined;
  try {
    values = await s.waitFor(Promise.race([program, hung]));
  } finally {
    finished = true;
    await s.waitAll();
    await ticker;
  }
  return { w, rt, clock, listeners, values };
}

async function checkProgram(s: fc.Scheduler, prog: Program, unhandled: unknown[]): Promise<void> {
  const { w, rt, clock, listeners, values } = await execute(s, prog);
  try {
    assertEquals(w.violations.slice(0, 5), [], "invariants broken during the run");
    const st = rt.stats();
    const count = (status: string) => w.runs.filter((r) => statusOf(r) === status).length;
    assertEquals(st, {
      max: prog.max,
      active: 0,
      waiting: 0,
      started: w.runs.length,
      succeeded: count("succeeded"),
      failed: count("failed"),
      cancelled: count("cancelled"),
    });
    for (const { h, run } of w.handles) assertEquals(h.status, statusOf(run), `process ${h.id}`);
    if (values !== undefined) { // undefined: the program disposed the runtime
      const [counter, ...accounts] = values;
      assertEquals(counter, w.increments.length, "a modifyVar increment was lost");
      assertEquals(
        [...w.increments].sort((a, b) => a - b),
        w.increments.map((_, i) => i + 1),
        "two increments saw the same value",
      );
      assertEquals(accounts.reduce((a, b) => a + b, 0), w.total, "transfers did not conserve");
    }
    assertEquals(clock.pending, 0, "a sleep (timeout, backoff, delay) was left behind");
    assertEquals(listeners.map((l) => l.size), listeners.map(() => 0), "abort listeners leaked");
    if (w.fifo) {
      const starts = w.queued.map((seq) => w.runsByFork.get(seq)?.startSeq)
        .filter((n) => n !== undefined);
      assert(starts.every((n, i) => i === 0 || n > starts[i - 1]), `fifo start order ${starts}`);
    }
  } finally {
    current = undefined;
    await rt[Symbol.asyncDispose]();
  }
  await macrotask();
  assertEquals(unhandled.length, 0, `unhandled rejection: ${unhandled[0]}`);
}

function property(name: string, arb: fc.Arbitrary<Program>) {
  return async (t: Deno.TestContext) => {
    await t.step(name, async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (event: PromiseRejectionEvent) => {
        event.preventDefault();
        unhandled.push(event.reason);
      };
      globalThis.addEventListener("unhandledrejection", onUnhandled);
      const started = performance.now();
      try {
        await fc.assert(
          fc.asyncProperty(schedulerArb, arb, (s, prog) => checkProgram(s, prog, unhandled)),
          { numRuns: RUNS },
        );
      } finally {
        globalThis.removeEventListener("unhandledrejection", onUnhandled);
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(`${name}: ${RUNS} runs in ${seconds} s`);
    });
  };
}

Deno.test("interleaving properties", async (t) => {
  await property("random programs keep every invariant", programArb())(t);
  await property(
    "fifo waiters start in arrival order",
    programArb({ fork: 24, step: 6, cancel: 4, abort: 4, throw: 0, dispose: 0 }, 30)
      // One or two slots, so most forks queue behind each other.
      .map((p) => ({ ...p, policy: "fifo" as const, max: 1 + p.max % 2 })),
  )(t);
  await property(
    "shared variables lose no update under cancellation",
    programArb(
      { fork: 16, all: 6, eval: 4, cancel: 6, abort: 4, throw: 0, scope: 0, dispose: 0 },
      30,
    ),
  )(t);
});
