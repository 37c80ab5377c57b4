// How a scope body runs a program's actions. Every await a body makes outside
// the library goes through the fast-check scheduler; each action checks what
// the library gave back as soon as it has it.
import {
  type AppL,
  AwaitTimeoutError,
  type ForkOptions,
  type LangL,
  ProcessCancelledError,
  ProcessFailedError,
  type ProcessHandle,
} from "../mod.ts";
import type { Action, ForkOpts } from "./_program_gen.ts";
import {
  makeProcess,
  runOps,
  ScopeModel,
  type Slot,
  step,
  violate,
  type World,
} from "./_program_world.ts";
import { checkOutcome, closedByScope, verifyScope } from "./_program_check.ts";

const noop = () => {};

function forkOptions(w: World, opts: ForkOpts): ForkOptions {
  const signal = opts.signal === undefined ? undefined : w.controllers[opts.signal].signal;
  return { timeoutMs: opts.timeoutMs, signal };
}

async function awaitAction(
  w: World,
  app: AppL,
  sm: ScopeModel,
  slots: Slot[],
  a: Extract<Action, { k: "await" }>,
) {
  if (slots.length === 0) return;
  const slot = slots[a.target % slots.length];
  let h: ProcessHandle<unknown>;
  try {
    h = await slot.promise;
  } catch {
    return; // the fork itself was refused; the slot's handler checked why
  }
  const run = w.runsByFork.get(slot.seq)!;
  const signal = a.signal === undefined ? undefined : w.controllers[a.signal].signal;
  try {
    const value = await app.awaitResult(h, { timeoutMs: a.timeoutMs, signal });
    checkOutcome(w, sm, h, run, { value });
  } catch (error) {
    if (closedByScope(app, error)) return;
    if (signal !== undefined && error === signal.reason) return; // only the wait ended
    if (error instanceof AwaitTimeoutError) {
      if (a.timeoutMs === undefined || error.processId !== h.id) {
        violate(w, `unexpected ${error.message}`);
      }
      return;
    }
    checkOutcome(w, sm, h, run, { error });
  }
}

function forkAction(
  w: World,
  app: AppL,
  sm: ScopeModel,
  slots: Slot[],
  a: Extract<Action, { k: "fork" }>,
) {
  const seq = w.nextFork++;
  const options = forkOptions(w, a.opts);
  const preAborted = options.signal?.aborted === true;
  const closed = app.signal.aborted;
  const before = w.runs.length;
  const promise = app.forkProcess(makeProcess(w, a.body, sm, seq), options);
  const startedNow = w.runs.length > before;
  if (!startedNow && !preAborted && !closed) w.queued.push(seq);
  if (startedNow && (preAborted || closed)) violate(w, `fork ${seq} started although refused`);
  const slot: Slot = { seq, promise };
  slots.push(slot);
  const settled = promise.then((h) => {
    slot.handle = h;
    const run = w.runsByFork.get(seq);
    if (run === undefined || run.id !== h.id) {
      return violate(w, `fork ${seq} resolved before its process started`);
    }
    w.handles.push({ h, run, last: h.status });
    w.check(`fork ${seq} resolved`);
  }, (error) => {
    if (w.runsByFork.has(seq)) violate(w, `fork ${seq} rejected but its process started`);
    if (error !== options.signal?.reason && !closedByScope(app, error)) {
      violate(w, `fork ${seq} rejected with ${error}`);
    }
  });
  return a.wait ? settled : undefined;
}

function tryAction(
  w: World,
  app: AppL,
  sm: ScopeModel,
  slots: Slot[],
  a: Extract<Action, { k: "try" }>,
) {
  const seq = w.nextFork++;
  const options = forkOptions(w, a.opts);
  const before = w.rt.stats();
  const runs = w.runs.length;
  let h: ProcessHandle<unknown> | undefined;
  try {
    h = app.tryForkProcess(makeProcess(w, a.body, sm, seq), options);
  } catch (error) {
    if (error !== options.signal?.reason && !closedByScope(app, error)) {
      violate(w, `tryFork threw ${error}`);
    }
    return;
  }
  const run = w.runsByFork.get(seq);
  if (h === undefined) {
    if (w.runs.length !== runs || before.active < before.max) {
      violate(w, "tryFork refused with a slot free");
    }
  } else if (run === undefined || run.id !== h.id) {
    violate(w, "tryFork returned a handle without starting its process");
  } else {
    w.handles.push({ h, run, last: h.status });
    slots.push({ seq, promise: Promise.resolve(h), handle: h });
  }
}

function allAction(w: World, app: AppL, sm: ScopeModel, a: Extract<Action, { k: "all" }>) {
  const seqs = a.bodies.map(() => w.nextFork++);
  const group: ScopeModel["groups"][number] = { runs: [] };
  sm.groups.push(group);
  const procs = a.bodies.map((body, i) => makeProcess(w, body, sm, seqs[i]));
  const indices = a.bodies.map((_, i) => i);
  const items = a.lazy
    ? (async function* () {
      for (const i of indices) {
        await step(w, `forkAll source ${i}`);
        yield i;
      }
    })()
    : indices;
  const options = forkOptions(w, a.opts);
  const promise = app.forkAll(items, (i: number, lang: LangL) => {
    try {
      return procs[i](lang);
    } finally {
      group.runs.push(w.runsByFork.get(seqs[i])!);
    }
  }, options);
  const settled = promise.then((results) => {
    indices.forEach((i) => {
      const run = w.runsByFork.get(seqs[i]);
      if (run === undefined || !run.returned || results[i] !== run.value) {
        violate(w, `forkAll result ${i} is wrong`);
      }
    });
  }, (error) => {
    group.atReject = group.runs.length;
    if (group.runs.some((r) => !r.ended)) violate(w, "forkAll rejected before its items stopped");
    const run = group.runs.find((r) => r.id === (error as ProcessFailedError).processId);
    if (error instanceof ProcessFailedError && run !== undefined && error.cause === run.thrown) {
      sm.observed.add(run.id);
    } else if (
      error instanceof ProcessCancelledError &&
      group.runs.some((r) => r.lang.signal.reason === error)
    ) {
      // an item was cancelled (its timeout or the signal): forkAll reports that
    } else if (error !== options.signal?.reason && !closedByScope(app, error)) {
      violate(w, `forkAll rejected with ${error}`);
    }
  });
  return a.wait ? settled : undefined;
}

async function evalAction(w: World, app: AppL, a: Extract<Action, { k: "eval" }>) {
  const thrown = new Error("evalLang script throws");
  const value = {};
  try {
    const got = await app.evalLang(async (lang) => {
      await runOps(w, a.body, lang, "evalLang");
      if (a.body.end === "throw") throw thrown;
      return value;
    });
    if (got !== value) violate(w, "evalLang resolved with another value");
  } catch (error) {
    const cancelled = error instanceof ProcessCancelledError && app.signal.aborted;
    if (error !== thrown && !cancelled && !closedByScope(app, error)) {
      violate(w, `evalLang rejected with ${error}`);
    }
  }
}

/** Runs a scope body; returns the scope's token unless it hits a "throw". */
export async function runBody(
  w: World,
  app: AppL,
  actions: Action[],
  sm: ScopeModel,
): Promise<object> {
  sm.entered = true;
  const slots: Slot[] = [];
  for (const a of actions) {
    if (a.k === "throw") throw sm.bodyError = new Error(`the body of ${sm.label} throws`);
    try {
      switch (a.k) {
        case "fork":
          await forkAction(w, app, sm, slots, a);
          break;
        case "try":
          tryAction(w, app, sm, slots, a);
          break;
        case "all":
          await allAction(w, app, sm, a);
          break;
        case "await":
          await awaitAction(w, app, sm, slots, a);
          break;
        case "cancel":
          await cancelAction(w, slots, a);
          break;
        case "dispose":
          // Not awaited here: disposal waits for this very app to end.
          w.disposal ??= w.rt[Symbol.asyncDispose]();
          break;
        case "abort":
          w.controllers[a.signal].abort(new Error(`signal ${a.signal} aborts`));
          break;
        case "step":
          await step(w, `${sm.label} body`);
          break;
        case "eval":
          await evalAction(w, app, a);
          break;
        case "scope":
          await scopeAction(w, app, sm, a);
          break;
      }
    } catch (error) {
      if (!closedByScope(app, error)) violate(w, `${sm.label}: ${a.k} threw ${error}`);
    }
  }
  return sm.token;
}

async function cancelAction(w: World, slots: Slot[], a: Extract<Action, { k: "cancel" }>) {
  const slot = slots[a.target % slots.length];
  if (slot === undefined) return;
  if (!a.dispose) return void slot.promise.then((h) => h.cancel("the program cancels it"), noop);
  let h: ProcessHandle<unknown>;
  try {
    h = await slot.promise;
  } catch {
    return;
  }
  // What `await using` does at block exit.
  await h[Symbol.asyncDispose]();
  if (h.status === "running") violate(w, `process ${h.id} still runs after await using`);
  w.check(`after disposing process ${h.id}`);
}

async function scopeAction(
  w: World,
  app: AppL,
  parent: ScopeModel,
  a: Extract<Action, { k: "scope" }>,
) {
  const child = new ScopeModel(a.failFast, `${parent.label}/${parent.groups.length}.${w.nextFork}`);
  let outcome: { value?: unknown; error?: unknown };
  try {
    outcome = {
      value: await app.scope((c) => runBody(w, c, a.actions, child), { failFast: a.failFast }),
    };
  } catch (error) {
    outcome = { error };
  }
  if (!child.entered) {
    if (!closedByScope(app, outcome.error)) violate(w, `scope refused with ${outcome.error}`);
  } else verifyScope(w, child, outcome);
}
