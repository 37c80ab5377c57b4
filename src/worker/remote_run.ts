// The runtime's side of one process running on a worker: an ordinary process
// of the pool (slot, record, status) whose script, on the runtime's thread, is
// this object. It carries out the worker's LangL operations with the process's
// own LangL object, so locks, cancellation, virtual time, the trace and the
// logs behave as for a script running here.
import { ProcessCancelledError, WorkerCrashedError } from "../errors.ts";
import {
  addCancelHook,
  type CancelHook,
  cancellationReason,
  removeCancelHook,
  requestCancellation,
} from "../lang/cancellation.ts";
import type { LangInterpreter } from "../lang/interpreter.ts";
import type { VarCell } from "../lang/shared_var.ts";
import type { RuntimeObserver } from "../runtime/observer.ts";
import { decodeError, encodeError, type FromWorker, type ToWorker } from "./protocol.ts";
import { describeError } from "../_validate.ts";
import { VarRefs } from "./_var_refs.ts";
import { startOperation } from "./_run_ops.ts";

/** The worker a run is on, as the run sees it. */
export interface RunHost {
  send(message: ToWorker): void;
  /** Stops the worker by force (after `graceMs`); resolves once it is gone. */
  forceStop(): Promise<void>;
  /** The run is over: the worker may take the next one. */
  runEnded(run: RemoteRun): void;
}

export interface RunSpec {
  readonly module: string;
  readonly exportName: string;
  readonly input: unknown;
  readonly graceMs: number;
  readonly name: string | undefined;
}

export interface RunContext {
  readonly seed: number;
  readonly observer: RuntimeObserver | undefined;
  readonly systemClock: boolean;
  readonly reportIdle: boolean;
}

type RunMessage = Extract<ToWorker, { t: "run" }>;

type Call = { resolve(value: unknown): void; reject(reason: unknown): void };

type Settle = { ok: true; value: unknown } | { ok: false; error: unknown };

const LOG = {
  debug: "logDebug",
  info: "logInfo",
  warning: "logWarning",
  error: "logError",
} as const;

export class RemoteRun implements CancelHook {
  /** The variables the worker was given, and their references. */
  readonly refs: VarRefs = new VarRefs();
  readonly #calls = new Map<number, Call>();
  readonly #done = Promise.withResolvers<Settle>();
  #inFlight = 0;
  #finished = false;
  /** The worker sent a message this runtime could not take: the run fails once its worker is gone. */
  #failed = false;
  #grace: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(
    readonly host: RunHost,
    readonly lang: LangInterpreter,
    readonly spec: RunSpec,
    readonly context: RunContext,
  ) {}

  /** Starts the script on the worker; settles like the script did. */
  async run(): Promise<unknown> {
    const { lang, spec, context } = this;
    const message: { -readonly [K in keyof RunMessage]: RunMessage[K] } = {
      t: "run",
      pid: lang.processId,
      seed: context.seed,
      module: spec.module,
      export: spec.exportName,
      input: this.refs.encode(spec.input),
    };
    if (spec.name !== undefined) message.name = spec.name;
    if (lang.fence !== undefined) message.fence = lang.fence;
    if (!context.systemClock) message.clock = "stamp";
    if (context.observer !== undefined) message.trace = true;
    if (context.reportIdle) message.idle = true;
    this.host.send(message);
    // A cancel hook rather than an abort listener: most runs are never cancelled.
    if (cancellationReason(lang) !== undefined) this.cancelled();
    else addCancelHook(lang, this);
    const outcome = await this.#done.promise;
    if (outcome.ok) return outcome.value;
    throw outcome.error;
  }

  receive(message: FromWorker): void {
    if (this.#finished) return;
    try {
      this.#receive(message);
    } catch (error) {
      // A message this runtime cannot take (a forged variable reference)
      // fails this run only. Its worker is stopped: the script may still be
      // running, and what it sends next must not reach the worker's next run.
      this.#failed = true;
      this.host.forceStop().then(() => this.#finish({ ok: false, error }));
    }
  }

  #receive(message: FromWorker): void {
    if (this.#failed) return;
    switch (message.t) {
      case "op":
        this.#op(message.id, message.op, message.a, message.b);
        return;
      case "newVar":
        this.refs.add(
          message.key,
          this.lang.newVar(this.refs.decode(message.v)) as VarCell<unknown>,
        );
        return;
      case "log": {
        const properties = message.properties === undefined
          ? undefined
          : this.refs.decode(message.properties) as Record<string, unknown>;
        this.lang[LOG[message.level]](message.message, properties);
        return;
      }
      case "answer": {
        const call = this.#calls.get(message.id);
        this.#calls.delete(message.id);
        if (message.e === undefined) call?.resolve(message.v);
        else call?.reject(decodeError(message.e));
        return;
      }
      case "ioEnd":
        this.#calls.get(message.id)?.resolve(undefined);
        this.#calls.delete(message.id);
        return;
      case "trace": {
        const observer = this.context.observer;
        const ops = message.ops;
        for (let i = 0; i < ops.length; i += 2) {
          observer?.trace(this.lang.processId, ops[i] as string, ops[i + 1] as number);
        }
        return;
      }
      case "done":
        if (message.e === undefined) {
          this.#finish({ ok: true, value: this.refs.decode(message.v) });
        } else this.#finish({ ok: false, error: decodeError(message.e) });
        return;
    }
  }

  /** The worker died outside the script (or could not be sent the run). */
  crashed(error: Error): void {
    this.#finish({ ok: false, error });
  }

  /** The run message could not be cloned. */
  refusedInput(error: unknown): void {
    this.#finish({
      ok: false,
      error: new TypeError(
        `forkWorker input could not be sent to the worker: ${describeError(error)}`,
        { cause: error },
      ),
    });
  }

  /** A reply that could not be cloned: the worker gets the reason instead. */
  refusedReply(message: ToWorker, error: unknown): void {
    if (message.t === "ok") {
      this.host.send({
        t: "err",
        id: message.id,
        c: false,
        e: encodeError(
          new TypeError(`the value could not be sent to the worker: ${describeError(error)}`),
        ),
      });
    } else if (message.t === "call") {
      const call = this.#calls.get(message.id);
      this.#calls.delete(message.id);
      call?.reject(
        new TypeError(`the value could not be sent to the worker: ${describeError(error)}`),
      );
    }
  }

  get finished(): boolean {
    return this.#finished;
  }

  #op(id: number, op: string, a: unknown, b: unknown): void {
    const lang = this.lang;
    let result: Promise<unknown>;
    try {
      result = startOperation(this, id, op, a, b);
    } catch (error) {
      result = Promise.reject(error);
    }
    this.#inFlight++;
    result.then(
      (v) => {
        this.#inFlight--;
        if (!this.#finished) this.host.send({ t: "ok", id, v });
      },
      (error) => {
        this.#inFlight--;
        if (this.#finished) return;
        const c = error === cancellationReason(lang);
        this.host.send({ t: "err", id, c, e: encodeError(error) });
      },
    );
  }

  /** Runs the worker's `evalIO` body there; settles when the worker says it ended. */
  io(id: number, signal: AbortSignal): Promise<unknown> {
    const ended = this.#await(id);
    const onAbort = () => this.host.send({ t: "ioAbort", id, e: encodeError(signal.reason) });
    signal.addEventListener("abort", onAbort, { once: true });
    this.host.send({ t: "io", id });
    return ended.finally(() => signal.removeEventListener("abort", onAbort));
  }

  /** Asks the worker to run a function it holds (a modifyVar or atomically body) on `value`. */
  call(id: number, value: unknown): Promise<unknown> {
    const answer = this.#await(id);
    this.host.send({ t: "call", id, v: value });
    return answer;
  }

  #await(id: number): Promise<unknown> {
    const { promise, resolve, reject } = Promise.withResolvers<unknown>();
    this.#calls.set(id, { resolve, reject });
    return promise;
  }

  /** The process was cancelled: tell the worker, and start the grace period. */
  cancelled(): void {
    if (this.#finished) return;
    this.host.send({ t: "cancel", e: encodeError(cancellationReason(this.lang)) });
    this.#grace = setTimeout(() => {
      this.#grace = undefined;
      if (this.#finished) return;
      // The script did not stop in time: stop its worker. The process ends
      // (cancelled) only once that worker is gone.
      this.host.forceStop().then(() =>
        this.#finish({ ok: false, error: cancellationReason(this.lang) })
      );
    }, this.spec.graceMs);
  }

  #finish(outcome: Settle): void {
    if (this.#finished) return;
    this.#finished = true;
    if (this.#grace !== undefined) clearTimeout(this.#grace);
    removeCancelHook(this.lang, this);
    if (this.#calls.size > 0) {
      // Only then: an Error's stack capture was ~18 µs of every tiny worker run.
      const gone = new WorkerCrashedError("the worker's script ended");
      for (const call of this.#calls.values()) call.reject(gone);
      this.#calls.clear();
    }
    // Operations the script left running here (a delay it did not await)
    // would otherwise hold timers and locks for a process that has ended.
    if (this.#inFlight > 0 && cancellationReason(this.lang) === undefined) {
      requestCancellation(
        this.lang,
        new ProcessCancelledError("the worker script ended before this operation"),
      );
    }
    this.host.runEnded(this);
    this.#done.resolve(outcome);
  }
}
