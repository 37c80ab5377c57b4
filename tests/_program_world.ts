// What one program run records, and the process bodies that record into it.
// Every await a process makes outside the library goes through the fast-check
// scheduler, so the scheduler, not the event loop, picks the interleaving.
import type fc from "fast-check";
import {
  type LangL,
  ProcessCancelledError,
  type ProcessHandle,
  type Runtime,
  type SharedVar,
} from "../mod.ts";
import type { BodySpec, Op } from "./_program_gen.ts";

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
  /** Whether cancellation had been requested when the body returned or threw. */
  requestedAtEnd: boolean;
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
      requestedAtEnd: false,
    };
    w.runs.push(run);
    w.runsByFork.set(forkSeq, run);
    sm.runs.push(run);
    return run;
  };
  const end = (run: Run, returned: boolean, outcome: unknown) => {
    run.ended = true;
    // A cancel requested after the body threw does not turn its failure into
    // a cancellation: the status follows what was requested by then.
    run.requestedAtEnd = run.lang.signal.aborted;
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
