// The LangL interpreter: how a runtime carries out a script's operations.
// One instance per process (and per evalLang call). It reaches the runtime's
// services through RuntimeCore and never anything of the application layer.
import {
  detachedCall,
  received,
  requireDuration,
  requireFunction,
  requireObject,
  requireSafeInteger,
} from "../_validate.ts";
import type { RuntimeCore } from "../runtime/core.ts";
import type { LogLevel } from "../runtime/observer.ts";
import type { RandomStream } from "../runtime/random.ts";
import type { ProcessCancelledError } from "../errors.ts";
import {
  addCancelHook,
  addPlacedHook,
  type CancelHook,
  cancellationSignal,
  holdCancellationState,
  holderName,
  initialRare,
  type RareCancellation,
  setPlacedHookFinder,
  throwIfCancelled,
} from "./cancellation.ts";
import { placeTimer, sleepOn, startTimer, timerAt } from "../runtime/clock.ts";
import type { EvalIOOptions, LangL, SharedVar, Transaction } from "./lang.ts";
import { checkIOOptions, runIO } from "./_eval_io.ts";
import * as vars from "./_var_ops.ts";
import { requireData, VarCell } from "./shared_var.ts";
import { promiseFor } from "../_settler.ts";
import { afterGuard } from "./_resume_guard.ts";
import { GuardedDelay, PendingDelay } from "./_pending_delay.ts";

const LOG_METHOD: Record<LogLevel, "debug" | "info" | "warn" | "error"> = {
  debug: "debug",
  info: "info",
  warning: "warn",
  error: "error",
};

class LangExtras {
  random: RandomStream | undefined;
  fence: number | undefined;
}

/** Every operation's entry: the receiver check, and the trace of the test runtime. */
let enter: (lang: LangInterpreter | undefined, op: string) => void;

/** Gives a process's LangL its lease's fencing token (the process holds a lease). */
export let setFence: (lang: LangInterpreter, fence: number) => void;

/**
 * A process's LangL object, which also carries its cancellation state: its
 * fields are this class's own (see Cancellation), the operations on them
 * cancellation.ts's.
 */
export class LangInterpreter implements LangL {
  #reason: ProcessCancelledError | undefined;
  // The slot holds a hook, or the place of one (addPlacedHook).
  #hook: CancelHook | number | undefined;
  #rare: RareCancellation | undefined;
  readonly #core: RuntimeCore;
  // The random stream and the fencing token, which few processes have: one
  // field instead of two (the name is in #rare, see holderName).
  #extras: LangExtras | undefined;

  static {
    holdCancellationState({
      reason: (lang) => (lang as LangInterpreter).#reason,
      setReason: (lang, reason) => (lang as LangInterpreter).#reason = reason,
      hook: (lang) => (lang as LangInterpreter).#hook,
      setHook: (lang, hook) => (lang as LangInterpreter).#hook = hook,
      rare: (lang) => (lang as LangInterpreter).#rare,
      setRare: (lang, rare) => (lang as LangInterpreter).#rare = rare,
    });
    setFence = (lang, fence) => (lang.#extras ??= new LangExtras()).fence = fence;
    setPlacedHookFinder((lang, place) => {
      if (!(lang instanceof LangInterpreter)) return undefined;
      const entry = lang.#core.timerClock?.[timerAt]?.(place);
      return entry instanceof PendingDelay && entry.cancellation === lang ? entry : undefined;
    });
  }

  constructor(core: RuntimeCore, readonly processId: number, name: string | undefined) {
    // No call for the usual unnamed process: this runs in every hand-off.
    this.#rare = name === undefined ? undefined : initialRare(name);
    this.#core = core;
  }

  /** Aborted with the cancellation's reason once the process is cancelled. */
  get signal(): AbortSignal {
    return cancellationSignal(this);
  }

  get fence(): number | undefined {
    return this.#extras?.fence;
  }

  delay(ms: number): Promise<void> {
    try {
      enter(this, "delay");
      requireDuration("delay ms", ms);
      throwIfCancelled(this);
      const clock = this.#core.timerClock;
      const guard = this.#core.resumeGuard;
      if (clock === undefined) {
        const sleeping = sleepOn(this.#core.clock, ms, this.signal, "delay ms");
        return guard === undefined ? sleeping : afterGuard(sleeping, guard, this, true);
      }
      const pending = guard === undefined
        ? new PendingDelay(clock, this)
        : new GuardedDelay(clock, this, guard);
      const promise = promiseFor<void>(pending);
      let place = -1;
      if (clock[placeTimer] === undefined) clock[startTimer](ms, pending);
      else place = clock[placeTimer](ms, pending);
      if (place >= 0 && addPlacedHook(this, place)) pending.place = place;
      else addCancelHook(this, pending);
      return promise;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  getRandomInt(min: number, max: number): number {
    enter(this, "getRandomInt");
    requireSafeInteger("getRandomInt min", min);
    requireSafeInteger("getRandomInt max", max);
    if (min > max) {
      throw new RangeError(`getRandomInt min (${min}) must not be greater than max (${max})`);
    }
    return this.#stream().int(min, max);
  }

  random(): number {
    enter(this, "random");
    return this.#stream().next();
  }

  now(): number {
    enter(this, "now");
    return this.#core.clock.now();
  }

  newVar<T>(initial: T): SharedVar<T> {
    enter(this, "newVar");
    requireData("newVar initial", initial);
    return new VarCell(this.#core.nextVarId(), this.#core, initial);
  }

  readVar<T>(variable: SharedVar<T>): Promise<T> {
    try {
      enter(this, "readVar");
      return vars.readVar(this, this.#cell(variable, "readVar"));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  writeVar<T>(variable: SharedVar<T>, value: T): Promise<void> {
    try {
      enter(this, "writeVar");
      return vars.writeVar(this, this.#cell(variable, "writeVar"), value);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  modifyVar<T>(variable: SharedVar<T>, f: (value: T) => T | Promise<T>): Promise<T> {
    try {
      enter(this, "modifyVar");
      const cell = this.#cell(variable, "modifyVar");
      requireFunction("modifyVar f", f);
      return vars.modifyVar(this, cell, f);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  atomically<R>(
    // deno-lint-ignore no-explicit-any
    variables: readonly SharedVar<any>[],
    body: (tx: Transaction) => R | Promise<R>,
  ): Promise<R> {
    try {
      enter(this, "atomically");
      if (!Array.isArray(variables)) {
        throw new TypeError(
          `atomically vars must be an array of SharedVar, got ${received(variables)}`,
        );
      }
      requireFunction("atomically body", body);
      const cells = variables.map((v, i) => this.#cell(v, `atomically vars[${i}]`));
      return vars.atomically(this, [...new Set(cells)], body);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  logDebug(message: string, properties?: Record<string, unknown>): void {
    enter(this, "logDebug");
    this.#log("debug", "logDebug", message, properties);
  }

  logInfo(message: string, properties?: Record<string, unknown>): void {
    enter(this, "logInfo");
    this.#log("info", "logInfo", message, properties);
  }

  logWarning(message: string, properties?: Record<string, unknown>): void {
    enter(this, "logWarning");
    this.#log("warning", "logWarning", message, properties);
  }

  logError(message: string, properties?: Record<string, unknown>): void {
    enter(this, "logError");
    this.#log("error", "logError", message, properties);
  }

  evalIO<T>(io: (signal: AbortSignal) => Promise<T>, options?: EvalIOOptions): Promise<T> {
    try {
      enter(this, "evalIO");
      requireFunction("evalIO io", io);
      const checked = checkIOOptions(options);
      if (!checked.shielded) throwIfCancelled(this);
      const running = runIO(this, io, checked, this.#core.observer);
      const guard = this.#core.resumeGuard;
      // A shielded evalIO is cleanup: its script goes on, cancelled or not.
      return guard === undefined ? running : afterGuard(running, guard, this, !checked.shielded);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  static {
    // A module-level function rather than a static private method, which V8
    // did not always inline: with `LangInterpreter.#enter`, delay and its
    // entry took 10-12 % of a virtual-clock profile, 5-6 % before it.
    enter = (lang, op) => {
      if (typeof lang !== "object" || lang === null || !(#core in lang)) {
        throw detachedCall("lang", op);
      }
      const core = lang.#core;
      const observer = core.observer;
      if (observer !== undefined) observer.trace(lang.processId, op, core.clock.now());
    };
  }

  #stream(): RandomStream {
    const extras = this.#extras ??= new LangExtras();
    return extras.random ??= this.#core.randomFor(this.processId);
  }

  #cell<T>(variable: SharedVar<T>, argument: string): VarCell<T> {
    return vars.cellOf(variable, argument, this.#core);
  }

  #log(
    level: LogLevel,
    op: string,
    message: string,
    properties: Record<string, unknown> | undefined,
  ): void {
    if (typeof message !== "string") {
      throw new TypeError(`${op} message must be a string, got ${received(message)}`);
    }
    if (properties !== undefined) requireObject(`${op} properties`, properties);
    const name = holderName(this);
    const record: Record<string, unknown> = { ...properties, processId: this.processId };
    if (name !== undefined) record.processName = name;
    const logger = this.#core.logger;
    logger[LOG_METHOD[level]](message, record);
    this.#core.hooks?.logged(this.processId, level, message, properties);
    const observer = this.#core.observer;
    if (observer !== undefined) {
      observer.log({
        processId: this.processId,
        ...(name === undefined ? {} : { processName: name }),
        level,
        message,
        properties: { ...properties },
        time: this.#core.clock.now(),
      });
    }
  }
}
