// One process in a worker: the module's export called with its input and a
// WorkerLang, and the answers to the runtime's messages for it. It imports
// nothing of the application layer: a worker script cannot fork.
import { ProcessCancelledError } from "../errors.ts";
import type { SharedVar } from "../lang/lang.ts";
import { VarCell } from "../lang/shared_var.ts";
import { describeError, show } from "../_validate.ts";
import type { WorkerLoop } from "./worker_loop.ts";
import {
  decodeError,
  describeUncloneable,
  encodeError,
  type FromWorker,
  type LogLevelName,
  type RemoteOp,
  type ToWorker,
  VAR_REF,
  varRefId,
} from "./protocol.ts";
import { copyDeep } from "./_copy_deep.ts";
import { replaceDeep } from "./_replace_deep.ts";
import { loaded, loadModule } from "./_module_cache.ts";
import {
  cancelWorkerLang,
  type RequestHandlers,
  type RunChannel,
  workerCancellationReason,
  WorkerLang,
} from "./worker_lang.ts";

export type RunMessage = Extract<ToWorker, { t: "run" }>;

interface Pending extends RequestHandlers {
  resolve(value: unknown): void;
  reject(reason: unknown): void;
}

type Thenable = (resolve: (v: unknown) => void, reject: (e: unknown) => void) => unknown;

export class WorkerRun implements RunChannel {
  readonly lang: WorkerLang;
  readonly #pending = new Map<number, Pending>();
  readonly #cells = new Map<number, VarCell<unknown>>();
  #nextId = 1;
  #nextKey = -1;
  ended = false;
  /** The module is still loading: the worker is not idle, whatever its event loop says. */
  loading = true;

  constructor(readonly worker: WorkerLoop, readonly spec: RunMessage) {
    this.lang = new WorkerLang(this, spec.pid, spec.seed, spec.fence);
  }

  now(): number {
    return this.spec.clock === "stamp" ? this.worker.stamp : Date.now();
  }

  traceLocal(op: string): void {
    if (!this.spec.trace) return;
    const last = this.worker.outbox.last;
    const time = this.now();
    if (last?.t === "trace") (last.ops as (string | number)[]).push(op, time);
    else this.worker.outbox.push({ t: "trace", ops: [op, time] });
  }

  request(op: RemoteOp, a?: unknown, b?: unknown, handlers?: RequestHandlers): Promise<unknown> {
    const id = this.#nextId++;
    const { promise, resolve, reject } = Promise.withResolvers<unknown>();
    const pending = (handlers ?? {}) as Pending;
    pending.resolve = resolve;
    pending.reject = reject;
    this.#pending.set(id, pending);
    this.worker.outbox.push({ t: "op", id, op, a, b });
    return promise;
  }

  newVar<T>(initial: T): VarCell<T> {
    const key = this.#nextKey--;
    const cell = new VarCell<T>(key, this, initial);
    this.#cells.set(key, cell as VarCell<unknown>);
    this.worker.outbox.push({ t: "newVar", key, v: this.encode(initial) });
    return cell;
  }

  cellOf<T>(variable: SharedVar<T>, argument: string): VarCell<T> {
    if (!(variable instanceof VarCell) || variable.owner !== this) {
      throw new TypeError(
        `${argument} must be a SharedVar this worker process received in its input, ` +
          `created with newVar or read from a variable, got ${show(variable)}`,
      );
    }
    return variable;
  }

  log(level: LogLevelName, message: string, properties: Record<string, unknown> | undefined) {
    this.worker.outbox.push({ t: "log", level, message, properties: this.encodeLog(properties) });
  }

  /** `value` as sent to the runtime (a copy, each property read once): its variables as references. */
  encode(value: unknown): unknown {
    return copyDeep(
      value,
      (v) => v instanceof VarCell && v.owner === this ? { [VAR_REF]: v.id } : undefined,
    );
  }

  decode(value: unknown): unknown {
    return replaceDeep(value, (v) => {
      const id = varRefId(v);
      if (id === undefined) return undefined;
      let cell = this.#cells.get(id);
      if (cell === undefined) {
        cell = new VarCell(id, this, undefined);
        this.#cells.set(id, cell);
      }
      return cell;
    });
  }

  encodeLog(properties: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    return properties === undefined
      ? undefined
      : this.encode(properties) as Record<string, unknown>;
  }

  /** Runs the script; its outcome goes to the outbox. Synchronous for a loaded module and a synchronous script. */
  start(): void {
    const module = loaded.get(this.spec.module);
    if (module === undefined) {
      loadModule(this.spec.module).then((loadedModule) => this.#call(loadedModule), (error) => {
        this.loading = false;
        this.#end({ t: "done", e: encodeError(error) });
      });
    } else this.#call(module);
  }

  #call(module: Record<string, unknown>): void {
    this.loading = false;
    this.worker.scheduleIdle();
    let value: unknown;
    let then: unknown;
    try {
      const fn = module[this.spec.export];
      if (typeof fn !== "function") {
        throw new TypeError(
          `worker module ${this.spec.module} has no function export ${
            JSON.stringify(this.spec.export)
          } (got ${show(fn)})`,
        );
      }
      value = fn(this.decode(this.spec.input), this.lang);
      if (value !== null && (typeof value === "object" || typeof value === "function")) {
        then = (value as { then?: unknown }).then;
      }
    } catch (error) {
      this.#end({ t: "done", e: encodeError(error) });
      return;
    }
    if (typeof then !== "function") {
      // One microtask later, as `await` would: what the script queued before
      // it returned (a log in a promise callback) still belongs to its run.
      queueMicrotask(() => this.#done(value));
      return;
    }
    // A thenable settles the run as `await` would (its `then` read once).
    new Promise((resolve, reject) => (then as Thenable).call(value, resolve, reject)).then(
      (result) => this.#done(result),
      (error) => this.#end({ t: "done", e: encodeError(error) }),
    );
  }

  #done(value: unknown): void {
    let outcome: FromWorker;
    try {
      outcome = { t: "done", v: this.encode(value) };
    } catch (error) {
      outcome = { t: "done", e: encodeError(error) };
    }
    this.#end(outcome);
  }

  #end(outcome: FromWorker): void {
    this.ended = true;
    // Still the worker's run until the next one starts: a result that cannot
    // be cloned is found refused at the flush, and replaced there.
    this.worker.outbox.push(outcome);
  }

  receive(message: ToWorker): void {
    switch (message.t) {
      case "ok":
      case "err": {
        const pending = this.#pending.get(message.id);
        if (pending === undefined) return;
        this.#pending.delete(message.id);
        if (message.t === "ok" && pending.local === undefined) {
          pending.resolve(this.decode(message.v));
        } else if (message.t === "ok") {
          pending.resolve(pending.local!());
        } else if (pending.thrown !== undefined) {
          pending.reject(pending.thrown.error);
        } else if (message.c && workerCancellationReason(this.lang) !== undefined) {
          // The script sees its own reason, the one its signal carries.
          pending.reject(workerCancellationReason(this.lang));
        } else {
          pending.reject(decodeError(message.e));
        }
        return;
      }
      case "cancel": {
        const data = message.e;
        const reason = new ProcessCancelledError(data.message, {
          cause: data.cause === undefined ? undefined : decodeError(data.cause),
        });
        if (data.name !== undefined) reason.name = data.name;
        cancelWorkerLang(this.lang, reason);
        return;
      }
      case "call": {
        const pending = this.#pending.get(message.id);
        if (pending?.onCall === undefined) return;
        pending.onCall(this.decode(message.v)).then(
          (v) => this.worker.outbox.push({ t: "answer", id: message.id, v }),
          (error) =>
            this.worker.outbox.push({ t: "answer", id: message.id, e: encodeError(error) }),
        );
        return;
      }
      case "io": {
        const pending = this.#pending.get(message.id);
        if (pending?.onIo === undefined) return;
        const end = () => this.worker.outbox.push({ t: "ioEnd", id: message.id });
        pending.onIo().then(end, end);
        return;
      }
      case "ioAbort": {
        this.#pending.get(message.id)?.onIoAbort?.(decodeError(message.e));
        return;
      }
    }
  }

  /** What goes instead of a message whose values could not be cloned. */
  refused(message: FromWorker, error: unknown): void {
    const outbox = this.worker.outbox;
    const why = (what: string) =>
      new TypeError(`${what} could not be sent to the runtime: ${describeError(error)}`, {
        cause: error,
      });
    switch (message.t) {
      case "done":
        if (message.e !== undefined) {
          outbox.push({ t: "done", e: describeUncloneable(message.e) });
        } else {
          outbox.push({ t: "done", e: encodeError(why("the worker script's result")) });
        }
        return;
      case "answer":
        outbox.push({ t: "answer", id: message.id, e: encodeError(why("the value")) });
        return;
      case "op": {
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        pending?.reject(why(`${message.op}'s argument`));
        return;
      }
      case "log":
        outbox.push({
          t: "log",
          level: message.level,
          message: message.message,
          properties: { unsent: `the properties could not be cloned: ${describeError(error)}` },
        });
        return;
      case "newVar":
        outbox.push({ t: "newVar", key: message.key, v: undefined });
        outbox.push({
          t: "log",
          level: "error",
          message: "newVar: the initial value could not be sent to the runtime",
          properties: { error: describeError(error) },
        });
        return;
      default:
        return;
    }
  }
}
