// forkWorker: a process whose script runs in a worker (a Web Worker or a
// Deno child process). It first waits for a free worker of its kind, then
// forks like any process (a slot, a record, a status), its script on this
// thread being the RemoteRun that serves the worker's LangL.
import { requireDuration, show } from "../_validate.ts";
import type { LangInterpreter } from "../lang/interpreter.ts";
import type { LangL } from "../lang/lang.ts";
import { systemClock } from "../runtime/clock.ts";
import type { Isolation, WorkerHost } from "../worker/host.ts";
import { WorkerPool, WorkerWaiter } from "../worker/pool.ts";
import type { RuntimeCore } from "../runtime/core.ts";
import { RemoteRun, type RunContext, type RunSpec } from "../worker/remote_run.ts";
import type { ForkOptions, ProcessHandle, WorkerForkOptions } from "./app.ts";
import { checkForkOptions } from "./_options.ts";
import type { Scope } from "./scope.ts";
import type { ScopeDependent } from "./_fork_host.ts";

const ISOLATIONS = ["thread", "process"] as const;
const DEFAULT_GRACE_MS = 1_000;

function moduleUrl(module: unknown): string {
  if (module instanceof URL) return module.href;
  if (typeof module === "string") {
    if (module.startsWith("/")) return new URL(`file://${module}`).href;
    if (URL.canParse(module)) return new URL(module).href;
  }
  throw new TypeError(
    "forkWorker module must be a URL or an absolute URL string " +
      `(new URL("./worker.ts", import.meta.url)), got ${show(module)}`,
  );
}

export function forkWorker<I, T>(
  scope: Scope,
  module: URL | string,
  input: I,
  options: WorkerForkOptions | undefined,
): Promise<ProcessHandle<T>> {
  const url = moduleUrl(module);
  const checked = checkForkOptions("forkWorker", options);
  const { export: exportName = "default", graceMs = DEFAULT_GRACE_MS, isolation = "thread" } =
    options ?? {};
  if (typeof exportName !== "string") {
    throw new TypeError(`forkWorker options.export must be a string, got ${show(exportName)}`);
  }
  requireDuration("forkWorker options.graceMs", graceMs);
  if (!ISOLATIONS.includes(isolation)) {
    throw new TypeError(
      `forkWorker options.isolation must be "thread" or "process", got ${show(isolation)}`,
    );
  }
  if (checked.signal?.aborted) return Promise.reject(checked.signal.reason);
  const spec: RunSpec = { module: url, exportName, input, graceMs, name: checked.name };
  const forkOptions: ForkOptions = checked;
  const pool = workerPoolOf(scope.core);
  const host = pool.tryAcquire(isolation);
  if (host !== undefined) return forkOn<T>(scope, host, spec, forkOptions);
  const wait = new WorkerWait(scope, checked.signal, isolation);
  pool.enqueue(isolation, wait);
  return wait.promise.then((granted) => forkOn<T>(scope, granted, spec, forkOptions));
}

function forkOn<T>(
  scope: Scope,
  host: WorkerHost,
  spec: RunSpec,
  options: ForkOptions,
): Promise<ProcessHandle<T>> {
  const core = scope.core;
  const context: RunContext = {
    seed: core.seed,
    observer: core.observer,
    systemClock: core.clock === systemClock,
    reportIdle: host.pool.gate !== undefined,
  };
  const script = (lang: LangL) => {
    const run = new RemoteRun(host, lang as LangInterpreter, spec, context);
    host.run = run;
    return run.run();
  };
  return (scope.forkProcess(script, options) as Promise<ProcessHandle<T>>).catch((error) => {
    host.pool.release(host);
    throw error;
  });
}

/** A forkWorker call waiting for a free worker. */
class WorkerWait extends WorkerWaiter implements ScopeDependent {
  readonly #resolvers = Promise.withResolvers<WorkerHost>();
  readonly #onAbort: (() => void) | undefined;

  constructor(
    readonly scope: Scope,
    readonly signal: AbortSignal | undefined,
    readonly kind: Isolation,
  ) {
    super();
    scope.workStarted();
    scope.addDependent(this);
    if (signal !== undefined) {
      this.#onAbort = () => this.#withdraw(signal.reason);
      signal.addEventListener("abort", this.#onAbort, { once: true });
    }
  }

  get promise(): Promise<WorkerHost> {
    return this.#resolvers.promise;
  }

  workerGranted(host: WorkerHost): void {
    this.#leave();
    this.#resolvers.resolve(host);
  }

  scopeCancelled(): void {
    this.#withdraw(this.scope.closedError());
  }

  #withdraw(reason: unknown): void {
    if (!workerPoolOf(this.scope.core).withdraw(this.kind, this)) return;
    this.#leave();
    this.#resolvers.reject(reason);
  }

  #leave(): void {
    if (this.#onAbort !== undefined) this.signal!.removeEventListener("abort", this.#onAbort);
    this.scope.removeDependent(this);
    this.scope.workEnded();
  }
}

/** The runtime's worker pool, started on its first forkWorker. */
function workerPoolOf(core: RuntimeCore): WorkerPool {
  let pool = core.workers as WorkerPool | undefined;
  if (pool === undefined) {
    pool = new WorkerPool(
      core.workerLimit,
      core.clock,
      core.observer?.holdClock?.bind(core.observer),
    );
    core.workers = pool;
  }
  return pool;
}
