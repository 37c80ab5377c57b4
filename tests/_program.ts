// Random programs for the interleaving properties: what they are (arbitraries)
// and how a body runs them. Every await a process or a body makes outside the
// library goes through the fast-check scheduler, so the scheduler, not the
// event loop, picks the interleaving. The checks on the outcome live in
// property_test.ts; here we only record what happened.
import fc from "fast-check";
import {
  type AppL,
  AwaitTimeoutError,
  type ForkOptions,
  type LangL,
  ProcessCancelledError,
  ProcessFailedError,
  type ProcessHandle,
  type Runtime,
  ScopeClosedError,
  type SharedVar,
} from "../mod.ts";

export type Op =
  | { k: "step" }
  | { k: "delay"; ms: number }
  | { k: "incr" }
  | { k: "transfer"; from: number; to: number; amount: number }
  | { k: "audit" }
  | { k: "io" };

/** A process body: its LangL ops, how it ends, whether it shrugs off cancellation. */
export interface BodySpec {
  ops: Op[];
  end: "return" | "throw";
  swallow: boolean;
  sync: boolean;
}

export interface ForkOpts {
  timeoutMs?: number;
  signal?: number;
}

export type Action =
  | { k: "fork"; body: BodySpec; wait: boolean; opts: ForkOpts }
  | { k: "try"; body: BodySpec; opts: ForkOpts }
  | { k: "all"; bodies: BodySpec[]; lazy: boolean; wait: boolean; opts: ForkOpts }
  | { k: "await"; target: number; timeoutMs?: number; signal?: number }
  | { k: "cancel"; target: number; dispose: boolean }
  | { k: "dispose" }
  | { k: "abort"; signal: number }
  | { k: "step" }
  | { k: "eval"; body: BodySpec }
  | { k: "throw" }
  | { k: "scope"; failFast: boolean; actions: Action[] };

export interface Program {
  max: number;
  policy: "fifo" | "backoff";
  seed: number;
  failFast: boolean;
  actions: Action[];
}

export const ACCOUNTS = 3;
export const SIGNALS = 2;

/** Relative weights of the action kinds; a property can favour some. */
export type Weights = Partial<Record<Action["k"], number>>;

const DEFAULT_WEIGHTS: Record<Action["k"], number> = {
  step: 4,
  fork: 12,
  try: 4,
  all: 4,
  await: 8,
  cancel: 4,
  abort: 2,
  dispose: 1,
  eval: 2,
  throw: 1,
  scope: 2,
};

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constant({ k: "step" as const }),
  fc.record({ k: fc.constant("delay" as const), ms: fc.integer({ min: 0, max: 4 }) }),
  fc.constant({ k: "incr" as const }),
  fc.record({
    k: fc.constant("transfer" as const),
    from: fc.nat(ACCOUNTS - 1),
    to: fc.nat(ACCOUNTS - 1),
    amount: fc.integer({ min: 1, max: 9 }),
  }),
  fc.constant({ k: "audit" as const }),
  fc.constant({ k: "io" as const }),
);

export const bodyArb: fc.Arbitrary<BodySpec> = fc.record({
  ops: fc.array(opArb, { maxLength: 4 }),
  end: fc.oneof(
    { arbitrary: fc.constant("return" as const), weight: 2 },
    fc.constant("throw" as const),
  ),
  swallow: fc.boolean(),
  sync: fc.boolean(),
});

const optsArb: fc.Arbitrary<ForkOpts> = fc.record({
  timeoutMs: fc.integer({ min: 0, max: 6 }),
  signal: fc.nat(SIGNALS - 1),
}, { requiredKeys: [] });

export function programArb(weights: Weights = {}, size = 24): fc.Arbitrary<Program> {
  const w = (k: Action["k"]) => weights[k] ?? DEFAULT_WEIGHTS[k];
  const leaf: fc.Arbitrary<Action>[] = [];
  const weighted: { arbitrary: fc.Arbitrary<Action>; weight: number }[] = [];
  const add = (k: Action["k"], weight: number, arbitrary: fc.Arbitrary<Action>) => {
    if (weight > 0) weighted.push({ arbitrary, weight });
    if (k === "step") leaf.push(arbitrary);
  };
  const tree = fc.letrec<{ action: Action; actions: Action[] }>((tie) => {
    add("step", w("step"), fc.constant({ k: "step" }));
    add(
      "fork",
      w("fork"),
      fc.record({ k: fc.constant("fork"), body: bodyArb, wait: fc.boolean(), opts: optsArb }),
    );
    add("try", w("try"), fc.record({ k: fc.constant("try"), body: bodyArb, opts: optsArb }));
    add(
      "all",
      w("all"),
      fc.record({
        k: fc.constant("all"),
        bodies: fc.array(bodyArb, { minLength: 1, maxLength: 4 }),
        lazy: fc.boolean(),
        wait: fc.boolean(),
        opts: optsArb,
      }),
    );
    add(
      "await",
      w("await"),
      fc.record({
        k: fc.constant("await"),
        target: fc.nat(7),
        timeoutMs: fc.integer({ min: 0, max: 6 }),
        signal: fc.nat(SIGNALS - 1),
      }, { requiredKeys: ["k", "target"] }),
    );
    add(
      "cancel",
      w("cancel"),
      fc.record({ k: fc.constant("cancel"), target: fc.nat(7), dispose: fc.boolean() }),
    );
    add("dispose", w("dispose"), fc.constant({ k: "dispose" }));
    add(
      "abort",
      w("abort"),
      fc.record({ k: fc.constant("abort"), signal: fc.nat(SIGNALS - 1) }),
    );
    add("eval", w("eval"), fc.record({ k: fc.constant("eval"), body: bodyArb }));
    add("throw", w("throw"), fc.constant({ k: "throw" }));
    add(
      "scope",
      w("scope"),
      fc.record({
        k: fc.constant("scope"),
        failFast: fc.boolean(),
        actions: tie("actions") as fc.Arbitrary<Action[]>,
      }),
    );
    return {
      action: fc.oneof(
        { maxDepth: 2, depthIdentifier: "scope" },
        { arbitrary: leaf[0], weight: 1 },
        ...weighted,
      ),
      actions: fc.array(tie("action") as fc.Arbitrary<Action>, { maxLength: size, size: "medium" }),
    };
  });
  return fc.record({
    max: fc.integer({ min: 1, max: 5 }),
    policy: fc.constantFrom("fifo" as const, "backoff" as const),
    seed: fc.nat(),
    failFast: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, fc.constant(true)),
    actions: fc.array(tree.action, { minLength: 3, maxLength: size, size: "medium" }),
  });
}

// ---- what a run records -------------------------------------------------------

/** One started process, as its own body saw it. */
export interface Run {
  readonly id: number;
  readonly forkSeq: number;
  readonly scope: ScopeModel;
  readonly lang: LangL;
  readonly startSeq: number;
  ended: boolean;
  returned: boolean;
  value: unknown;
  thrown: unknown;
}

export class ScopeModel {
  readonly runs: Run[] = [];
  /** Process ids whose failure an awaitResult or a forkAll rejection delivered. */
  readonly observed = new Set<number>();
  /** forkAll groups: the runs each started, and how many when it rejected. */
  readonly groups: { runs: Run[]; atReject?: number }[] = [];
  bodyError: Error | undefined = undefined;
  entered = false;
  readonly token: object;
  constructor(readonly failFast: boolean, readonly label: string) {
    this.token = { scope: label };
  }
}

export interface Slot {
  readonly seq: number;
  readonly promise: Promise<ProcessHandle<unknown>>;
  handle?: ProcessHandle<unknown>;
}

/** The shared state of one program run. */
export interface World {
  readonly s: fc.Scheduler;
  readonly rt: Runtime;
  readonly fifo: boolean;
  readonly counter: SharedVar<number>;
  readonly accounts: SharedVar<number>[];
  readonly total: number;
  readonly controllers: AbortController[];
  readonly runs: Run[];
  readonly runsByFork: Map<number, Run>;
  readonly increments: number[];
  readonly handles: { h: ProcessHandle<unknown>; run: Run; last: string }[];
  /** Fork sequence numbers of the forkProcess calls that had to queue, in call order. */
  readonly queued: number[];
  nextFork: number;
  nextStart: number;
  readonly violations: string[];
  /** Set once a program disposes the runtime. */
  disposal: Promise<void> | undefined;
  /** Checks the invariants that must hold at every step. */
  check(where: string): void;
}

export function violate(w: World, message: string): void {
  w.violations.push(message);
}

export function step(w: World, label: string): Promise<void> {
  return w.s.schedule(Promise.resolve(), label).then(() => w.check(label));
}

async function doOp(w: World, op: Op, lang: LangL, who: string): Promise<void> {
  switch (op.k) {
    case "step":
      return step(w, `${who} step`);
    case "delay":
      return lang.delay(op.ms);
    case "incr": {
      const value = await lang.modifyVar(w.counter, async (c) => {
        await step(w, `${who} inside modifyVar`);
        return c + 1;
      });
      w.increments.push(value);
      return;
    }
    case "transfer": {
      const [from, to] = [w.accounts[op.from], w.accounts[op.to]];
      await lang.atomically([from, to], async (tx) => {
        const balance = tx.read(from);
        await step(w, `${who} inside atomically`);
        tx.write(from, balance - op.amount);
        tx.write(to, tx.read(to) + op.amount);
      });
      return;
    }
    case "audit": {
      const sum = await lang.atomically(
        w.accounts,
        (tx) => w.accounts.reduce((t, v) => t + tx.read(v), 0),
      );
      if (sum !== w.total) violate(w, `${who}: audit saw ${sum}, the total is ${w.total}`);
      return;
    }
    case "io":
      return lang.evalIO(() => step(w, `${who} io`));
  }
}

/** Runs `spec.ops`; a cancelled op is swallowed if the spec says so. */
export async function runOps(w: World, spec: BodySpec, lang: LangL, who: string): Promise<void> {
  for (const op of spec.ops) {
    try {
      await doOp(w, op, lang, who);
    } catch (error) {
      if (!(error instanceof ProcessCancelledError)) {
        violate(w, `${who}: ${op.k} threw ${error}`);
      } else if (error !== lang.signal.reason) {
        violate(
          w,
          `${who}: ${op.k} threw a cancellation that is not the process's (${error.message})`,
        );
      }
      if (!spec.swallow) throw error;
    }
  }
}

/** A process that records its own start and end in the world. */
export function makeProcess(w: World, spec: BodySpec, sm: ScopeModel, forkSeq: number) {
  const begin = (lang: LangL): Run => {
    const run: Run = {
      id: lang.processId,
      forkSeq,
      scope: sm,
      lang,
      startSeq: w.nextStart++,
      ended: false,
      returned: false,
      value: undefined,
      thrown: undefined,
    };
    w.runs.push(run);
    w.runsByFork.set(forkSeq, run);
    sm.runs.push(run);
    return run;
  };
  const end = (run: Run, returned: boolean, outcome: unknown) => {
    run.ended = true;
    run.returned = returned;
    if (returned) run.value = outcome;
    else run.thrown = outcome;
  };
  if (spec.sync && spec.ops.length === 0) {
    return (lang: LangL): unknown => {
      const run = begin(lang);
      if (spec.end === "throw") {
        const error = new Error(`process ${run.id} throws`);
        end(run, false, error);
        throw error;
      }
      const value = { value: run.id };
      end(run, true, value);
      return value;
    };
  }
  return async (lang: LangL): Promise<unknown> => {
    const run = begin(lang);
    let value;
    try {
      await runOps(w, spec, lang, `process ${run.id}`);
      if (spec.end === "throw") throw new Error(`process ${run.id} throws`);
      value = { value: run.id };
    } catch (error) {
      end(run, false, error);
      throw error;
    }
    end(run, true, value);
    return value;
  };
}

// ---- how a scope body runs a program ---------------------------------------------

const noop = () => {};

/** What the status of a stopped run must be (see API.md point 4). */
export function statusOf(run: Run): "succeeded" | "failed" | "cancelled" {
  // After a stop nothing can request cancellation any more, so the signal
  // says whether it was requested before the stop.
  if (run.returned) return "succeeded";
  return run.lang.signal.aborted ? "cancelled" : "failed";
}

function forkOptions(w: World, opts: ForkOpts): ForkOptions {
  const signal = opts.signal === undefined ? undefined : w.controllers[opts.signal].signal;
  return { timeoutMs: opts.timeoutMs, signal };
}

/** An error the scope's own cancellation explains: ScopeClosedError with the reason. */
function closedByScope(app: AppL, error: unknown): boolean {
  return error instanceof ScopeClosedError && app.signal.aborted &&
    error.cause === app.signal.reason;
}

/** Checks what awaitResult delivered against how the process ended. */
function checkOutcome(
  w: World,
  sm: ScopeModel,
  h: ProcessHandle<unknown>,
  run: Run,
  got: { value?: unknown; error?: unknown },
): void {
  const who = `awaitResult(process ${h.id})`;
  if (h.status === "running") return violate(w, `${who} resumed while the process is running`);
  if (h.status !== statusOf(run)) {
    violate(w, `${who}: status ${h.status}, expected ${statusOf(run)}`);
  }
  if (!("error" in got)) {
    if (h.status !== "succeeded" || got.value !== run.value) {
      violate(w, `${who} resolved, status ${h.status}`);
    }
  } else if (got.error instanceof ProcessFailedError) {
    sm.observed.add(got.error.processId);
    if (h.status !== "failed" || got.error.cause !== run.thrown || got.error.processId !== h.id) {
      violate(w, `${who}: unexpected ${got.error.message} (status ${h.status})`);
    }
  } else if (got.error instanceof ProcessCancelledError) {
    if (h.status !== "cancelled" || got.error !== run.lang.signal.reason) {
      violate(w, `${who}: unexpected ${got.error.name} (status ${h.status})`);
    }
  } else violate(w, `${who} rejected with ${got.error}`);
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

/** Checks how a scope ended against API.md point 5. */
export function verifyScope(
  w: World,
  sm: ScopeModel,
  outcome: { value?: unknown; error?: unknown },
): void {
  const who = `scope ${sm.label}`;
  if (sm.runs.some((r) => !r.ended)) violate(w, `${who} ended before its processes stopped`);
  for (const g of sm.groups) {
    if (g.atReject !== undefined && g.runs.length > g.atReject) {
      violate(w, `${who}: forkAll started items after it rejected`);
    }
  }
  const failed = sm.runs.filter((r) => statusOf(r) === "failed");
  const ids = (errors: unknown[]) =>
    errors.map((e) => (e as ProcessFailedError).processId).sort().join();
  const error = outcome.error;
  if (sm.failFast && failed.length > 0) {
    if (!(error instanceof ProcessFailedError && failed.some((r) => r.id === error.processId))) {
      violate(w, `${who} (failFast, ${failed.length} failed) ended with ${error ?? "a value"}`);
    }
    return;
  }
  if (sm.bodyError !== undefined) {
    if (error !== sm.bodyError) {
      violate(w, `${who}: its body threw, it ended with ${error ?? "a value"}`);
    }
    return;
  }
  const unobserved = failed.filter((r) => !sm.observed.has(r.id));
  const expected = unobserved.map((r) => r.id).sort().join();
  if (unobserved.length === 0) {
    if (outcome.value !== sm.token) {
      violate(w, `${who} should have returned its value, got ${error}`);
    }
  } else if (unobserved.length === 1) {
    if (!(error instanceof ProcessFailedError) || ids([error]) !== expected) {
      violate(
        w,
        `${who} should reject with process ${expected}'s failure, got ${error ?? "a value"}`,
      );
    }
  } else if (!(error instanceof AggregateError) || ids(error.errors) !== expected) {
    violate(w, `${who} should reject with failures ${expected}, got ${error ?? "a value"}`);
  }
}
