// ProcessRecord.returned (a forkAll item's) and ForkedRecord.returned (a
// forkProcess process's) stop a process that has nobody to tell but its
// owner, batch and pool (no extras, stop waiter or debug log) by paths of
// their own, which must be announceStop's in every observable way. Property:
// a random program of forks, awaits and forkAll batches gives the same
// events (each script's start and end with the pool's counters then, each
// await's and batch's outcome, the scope's end) whether its processes take
// those paths or, each given a name (which puts it in the extras, and
// changes nothing else observable here), the full stop.
import { assert, assertEquals } from "@std/assert";
import fc from "fast-check";
import { Runtime } from "../mod.ts";
import { ProcessRecord } from "../src/app/process.ts";
import { ForkedRecord } from "../src/app/_records.ts";

const RUNS = Number(Deno.env.get("PROCPOOL_RUNS") ?? 100);

/** A process's script: `pauses` awaits (a microtask, or a timer turn), then it returns or throws. */
interface Script {
  readonly pauses: readonly ("tick" | "turn")[];
  readonly throws: boolean;
}

type Step =
  | { readonly t: "fork"; readonly script: Script }
  /** Awaits the result of the fork made `back` forks ago (running or stopped by then). */
  | { readonly t: "await"; readonly back: number }
  | { readonly t: "forkAll"; readonly scripts: readonly Script[] }
  /** Lets the forks made so far run a while. */
  | { readonly t: "turn" };

const script: fc.Arbitrary<Script> = fc.record({
  pauses: fc.array(fc.constantFrom("tick" as const, "turn" as const), { maxLength: 3 }),
  throws: fc.boolean(),
});

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ t: fc.constant("fork" as const), script }), weight: 4 },
  { arbitrary: fc.record({ t: fc.constant("await" as const), back: fc.nat(4) }), weight: 2 },
  {
    arbitrary: fc.record({
      t: fc.constant("forkAll" as const),
      scripts: fc.array(script, { minLength: 1, maxLength: 4 }),
    }),
    weight: 1,
  },
  { arbitrary: fc.constant({ t: "turn" as const }), weight: 1 },
);

const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** How many returning processes took each fast path, and how many the full stop. */
const taken = { item: 0, forked: 0, full: 0 };
const fastPaths = [
  [ProcessRecord.prototype, "item"],
  [ForkedRecord.prototype, "forked"],
] as const;
const originals = fastPaths.map(([proto]) => Object.getOwnPropertyDescriptor(proto, "returned")!);

/** Counts, for each returning process, the path it takes (see returned's first check). */
function countPaths(): void {
  fastPaths.forEach(([proto, kind], i) => {
    const returned = originals[i].value as (this: ProcessRecord, value: unknown) => void;
    proto.returned = function (value: unknown) {
      // A subclass's own returned calls no super: each process is counted once.
      const fast = this._extras === undefined && this._stopWaiter === undefined &&
        this._flags === 0;
      if (fast) taken[kind]++;
      else taken.full++;
      return returned.call(this, value);
    };
  });
}

/** What failed, without the process's label (which has its name). */
const why = (error: unknown): string => {
  const cause = (error as Error).cause;
  return `${(error as Error).name}: ${cause instanceof Error ? cause.message : cause}`;
};

/** Runs the program; every event it saw, in order. */
async function run(max: number, steps: readonly Step[], named: boolean): Promise<string[]> {
  const events: string[] = [];
  await using runtime = new Runtime({ maxProcesses: max });
  const seen = (event: string) => {
    const s = runtime.stats();
    events.push(`${event} | a${s.active} w${s.waiting} s${s.succeeded} f${s.failed}`);
  };
  const body = (id: string, { pauses, throws }: Script) => async () => {
    seen(`start ${id}`);
    for (const pause of pauses) await (pause === "tick" ? null : turn());
    seen(`end ${id}`);
    if (throws) throw new Error(id);
    return id;
  };
  const outcome = (id: string, promise: Promise<unknown>) =>
    promise.then((value) => seen(`${id} -> ${value}`), (error) => seen(`${id} !> ${why(error)}`));
  try {
    await runtime.runApp(async (app) => {
      const handles: Promise<unknown>[] = [];
      const pending: Promise<unknown>[] = [];
      let n = 0;
      let batches = 0;
      for (const s of steps) {
        if (s.t === "fork") {
          const id = `p${n++}`;
          const forked = app.forkProcess(body(id, s.script), named ? { name: id } : {});
          handles.push(forked);
        } else if (s.t === "await" && handles.length > 0) {
          const back = Math.min(s.back, handles.length - 1);
          const handle = handles[handles.length - 1 - back];
          pending.push(
            outcome(
              `await p${handles.length - 1 - back}`,
              handle.then((h) => app.awaitResult(h as never)),
            ),
          );
        } else if (s.t === "forkAll") {
          const b = batches++;
          const scripts = s.scripts.map((sc, i) => body(`b${b}.${i}`, sc));
          const names = named ? { name: `b${b}` } : {};
          pending.push(
            outcome(
              `batch b${b}`,
              app.forkAllSettled(scripts, (f) => f(), names).then((outcomes) =>
                outcomes.map((o) => o.status === "succeeded" ? o.value : o.status).join()
              ),
            ),
          );
        } else if (s.t === "turn") await turn();
      }
      await Promise.all(pending);
      await Promise.all(handles);
    });
    seen("scope ended");
  } catch (error) {
    seen(`scope failed ${why(error)}`);
  }
  return events;
}

Deno.test("a process stops the same by the fast paths of returned as by stop", async () => {
  countPaths();
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(step, { minLength: 1, maxLength: 12 }),
        async (max, steps) => {
          const fast = await run(max, steps, false);
          const before = taken.item + taken.forked;
          const full = await run(max, steps, true);
          assertEquals(taken.item + taken.forked, before, "a named process takes no fast path");
          assertEquals(fast, full);
        },
      ),
      { numRuns: RUNS },
    );
  } finally {
    fastPaths.forEach(([proto], i) => Object.defineProperty(proto, "returned", originals[i]));
  }
  // The property compared something: each fast path was taken, and so was the full stop.
  assert(taken.item > 0 && taken.forked > 0 && taken.full > 0, JSON.stringify(taken));
});
