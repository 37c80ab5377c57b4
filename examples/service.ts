/**
 * A long-lived service: one `runApp` for the server's whole life. Each request
 * runs in a scope of its own; background jobs are forked into the root scope,
 * where `onFailure` reports their failures as they happen (the root scope
 * keeps none); `forkProcess` waiting for a slot is the backpressure; and
 * `await using` shuts it all down: the server stops accepting, the jobs in
 * flight finish, then the runtime is disposed.
 *
 * ```sh
 * deno run --allow-net=127.0.0.1 --allow-env examples/service.ts   # prints its PORT
 * curl -X POST 'http://127.0.0.1:PORT/jobs?ms=500'       # 202, a background job
 * curl -X POST 'http://127.0.0.1:PORT/jobs?ms=10&fail=1' # 202; its failure is logged
 * curl 'http://127.0.0.1:PORT/squares?n=5'               # [0,1,4,9,16], in a request scope
 * curl 'http://127.0.0.1:PORT/stats'
 * ```
 *
 * tests/service_test.ts starts it on port 0 and drives it with `fetch`.
 *
 * @module
 */
import { getLogger } from "@logtape/logtape";
import { type AppL, type LangL, type PoolStats, type ProcessFailedError, Runtime } from "../mod.ts";
import { logToConsole, runMain } from "./_cli.ts";

/** A running service; `await using` it, or dispose it, to shut it down. */
export interface Service extends AsyncDisposable {
  /** Where it listens, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** The runtime's counters. */
  stats(): PoolStats;
}

/** A background job: some work that takes `ms`, and fails if asked to. */
export async function job(lang: LangL, ms: number, fail: boolean): Promise<void> {
  await lang.delay(ms);
  if (fail) throw new Error(`job ${lang.processId} failed on purpose`);
  lang.logInfo("job {processId} done");
}

/** Starts the service on 127.0.0.1 (port 0: any free port). */
export async function startService(options: {
  maxProcesses: number;
  onFailure: (error: ProcessFailedError) => void;
}): Promise<Service> {
  const runtime = new Runtime({ maxProcesses: options.maxProcesses });
  const root = Promise.withResolvers<AppL>();
  const stop = Promise.withResolvers<void>();
  // The root scope lives until shutdown; its body only waits for the signal.
  const app = runtime.runApp(async (app) => {
    root.resolve(app);
    await stop.promise;
  }, { onFailure: options.onFailure });
  const rootApp = await root.promise;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => handle(rootApp, runtime, request),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    stats: () => runtime.stats(),
    async [Symbol.asyncDispose]() {
      await server.shutdown(); // no new requests; those in flight are answered
      stop.resolve(); // the root scope now waits for its background jobs
      try {
        await app;
      } finally {
        await runtime[Symbol.asyncDispose]();
      }
    },
  };
}

async function handle(app: AppL, runtime: Runtime, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const number = (name: string, fallback: number) => Number(url.searchParams.get(name) ?? fallback);
  if (request.method === "POST" && url.pathname === "/jobs") {
    const ms = number("ms", 100);
    const fail = url.searchParams.has("fail");
    // Backpressure: with every slot busy this waits, and so does the client.
    // A client that hangs up withdraws its fork from the queue. Not through
    // request.signal itself: Deno.serve also aborts it once the response is
    // sent, and a fork's signal cancels the running process too.
    const hangUp = new AbortController();
    const onAbort = () => hangUp.abort(request.signal.reason);
    request.signal.addEventListener("abort", onAbort, { once: true });
    try {
      const handle = await app.forkProcess((lang) => job(lang, ms, fail), {
        name: "job",
        signal: hangUp.signal,
      });
      return Response.json({ id: handle.id }, { status: 202 });
    } finally {
      request.signal.removeEventListener("abort", onAbort);
    }
  }
  if (request.method === "GET" && url.pathname === "/squares") {
    const n = number("n", 5);
    // A request scope: whatever it forks ends with the request.
    const squares = await app.scope((scope) =>
      scope.forkAll(Array.from({ length: n }, (_, i) => i), async (i, lang) => {
        await lang.delay(1);
        return i * i;
      }, { signal: request.signal })
    );
    return Response.json(squares);
  }
  if (request.method === "GET" && url.pathname === "/stats") {
    return Response.json(runtime.stats());
  }
  return new Response("not found\n", { status: 404 });
}

if (import.meta.main) {
  await runMain(async () => {
    const undoLogging = await logToConsole("procpool", "info");
    const log = getLogger(["procpool", "service"]);
    {
      await using service = await startService({
        maxProcesses: 4,
        onFailure: (error) => log.error("background {error}", { error: error.message }),
      });
      console.log(`listening on ${service.url}; Ctrl-C drains the jobs and stops`);
      const interrupted = Promise.withResolvers<void>();
      Deno.addSignalListener("SIGINT", interrupted.resolve);
      await interrupted.promise;
      Deno.removeSignalListener("SIGINT", interrupted.resolve);
    } // the shutdown: stop accepting, finish the jobs, dispose the runtime
    await undoLogging();
  });
}
