// OpenTelemetry through `@opentelemetry/api` only: spans for processes,
// scopes and forkAll batches, span events for LangL logs, and the metrics in
// _otel_metrics.ts. Whether a provider is registered is asked once per
// runtime (otelHooks); without one the runtime gets no hooks at all.
import {
  type Attributes,
  context,
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  type Span,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import { describeError } from "../_validate.ts";
import type { LogLevel } from "./observer.ts";
import type { PoolHooks, ProcessProbe, ProcessView, ScriptCall, WorkKind } from "./_hooks.ts";
import { PoolMetrics } from "./_otel_metrics.ts";

const VERSION = "0.1.0";
/** The provider @opentelemetry/api falls back to when none is registered. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether a tracer provider was registered globally (Deno does with OTEL_DENO=true). */
function tracingOn(): boolean {
  const provider = trace.getTracerProvider();
  const real = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  return real !== NOOP_TRACER_PROVIDER;
}

/** Whether a meter provider was registered globally. */
function metricsOn(): boolean {
  return metrics.getMeter("procpool") !== createNoopMeter();
}

/** The span name of a process forked without a name. */
export const DEFAULT_PROCESS_SPAN = "procpool.process";

const WORK_SPAN: Record<WorkKind, string> = {
  runApp: "procpool.runApp",
  scope: "procpool.scope",
  forkAll: "procpool.forkAll",
  forkAllSettled: "procpool.forkAllSettled",
};

function recordFailure(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: describeError(error) });
}

/** A log's properties as span event attributes: primitives and arrays of them. */
function logAttributes(
  level: LogLevel,
  message: string,
  properties: Readonly<Record<string, unknown>> | undefined,
): Attributes {
  const attributes: Attributes = { "log.severity": level, "log.message": message };
  if (properties !== undefined) {
    for (const key in properties) {
      const value = properties[key];
      const type = typeof value;
      if (type === "string" || type === "number" || type === "boolean") {
        attributes[`log.property.${key}`] = value as string | number | boolean;
      } else if (value !== undefined) {
        attributes[`log.property.${key}`] = value instanceof Error
          ? describeError(value)
          : String(value);
      }
    }
  }
  return attributes;
}

class OtelProcess implements ProcessProbe {
  #span: Span | undefined = undefined;
  /** A cancel requested before the script ran (a handed-over process). */
  #earlyCancel: Error | undefined = undefined;
  readonly #startedAt: number;

  constructor(
    readonly hooks: OtelHooks,
    readonly tracer: Tracer,
    readonly process: ProcessView,
    readonly waitedMs: number,
  ) {
    this.#startedAt = hooks.now();
  }

  enter(call: ScriptCall, record: unknown, fn: unknown, item: unknown, withItem: boolean): unknown {
    const span = this.#open();
    return context.with(
      trace.setSpan(context.active(), span),
      call,
      undefined,
      record as never,
      fn as never,
      item,
      withItem,
    );
  }

  cancelRequested(reason: Error): void {
    if (this.#span === undefined) this.#earlyCancel = reason;
    else this.#cancelEvent(this.#span, reason);
  }

  stopped(process: ProcessView): void {
    const span = this.#span ?? this.#open();
    const status = process.status;
    span.setAttribute("procpool.process.outcome", status);
    if (status === "failed") {
      recordFailure(span, (process.error as Error & { cause?: unknown }).cause ?? process.error);
    }
    span.end();
    this.hooks.metrics?.stopped(status, this.hooks.now() - this.#startedAt);
  }

  #open(): Span {
    const { process, hooks } = this;
    const attributes: Attributes = {
      "procpool.process.id": process.id,
      "procpool.runtime.max_processes": hooks.maxProcesses,
      "procpool.process.wait_ms": this.waitedMs,
    };
    if (process.name !== undefined) attributes["procpool.process.name"] = process.name;
    const span = this.#span = this.tracer.startSpan(
      process.name ?? DEFAULT_PROCESS_SPAN,
      { attributes },
      context.active(),
    );
    if (this.#earlyCancel !== undefined) this.#cancelEvent(span, this.#earlyCancel);
    this.#earlyCancel = undefined;
    return span;
  }

  #cancelEvent(span: Span, reason: Error): void {
    const timeout = reason.name === "ProcessTimeoutError";
    const cause = (reason as Error & { cause?: unknown }).cause;
    span.addEvent(timeout ? "procpool.timeout" : "procpool.cancel", {
      "procpool.cancel.reason": cause === undefined ? reason.message : describeError(cause),
    });
  }
}

/** A probe for a runtime without tracing (metrics only). */
class MetricsOnlyProcess implements ProcessProbe {
  readonly #startedAt: number;

  constructor(readonly hooks: OtelHooks) {
    this.#startedAt = hooks.now();
  }

  enter(call: ScriptCall, record: unknown, fn: unknown, item: unknown, withItem: boolean): unknown {
    return call(record as never, fn as never, item, withItem);
  }

  cancelRequested(): void {}

  stopped(process: ProcessView): void {
    this.hooks.metrics!.stopped(process.status, this.hooks.now() - this.#startedAt);
  }
}

class OtelHooks implements PoolHooks {
  #grantWaitMs = 0;

  constructor(
    readonly tracer: Tracer | undefined,
    readonly metrics: PoolMetrics | undefined,
    readonly maxProcesses: number,
    readonly now: () => number,
  ) {}

  processStarted(process: ProcessView): ProcessProbe {
    const waitedMs = this.#grantWaitMs;
    this.#grantWaitMs = 0;
    this.metrics?.started(waitedMs);
    const tracer = this.tracer;
    return tracer === undefined
      ? new MetricsOnlyProcess(this)
      : new OtelProcess(this, tracer, process, waitedMs);
  }

  work<T>(kind: WorkKind, name: string | undefined, body: () => Promise<T>): Promise<T> {
    const tracer = this.tracer;
    if (tracer === undefined) return body();
    const attributes: Attributes = name === undefined ? {} : { "procpool.name": name };
    const span = tracer.startSpan(WORK_SPAN[kind], { attributes }, context.active());
    let running: Promise<T>;
    try {
      running = context.with(trace.setSpan(context.active(), span), body);
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      () => span.end(),
      (error) => {
        recordFailure(span, error);
        span.end();
      },
    );
    return running;
  }

  logged(
    _processId: number,
    level: LogLevel,
    message: string,
    properties: Readonly<Record<string, unknown>> | undefined,
  ): void {
    trace.getActiveSpan()?.addEvent("log", logAttributes(level, message, properties));
  }

  waitBegan(): void {}

  waitEnded(_key: object, granted: boolean, waitedMs: number): void {
    if (granted) this.#grantWaitMs = waitedMs;
  }

  slotsChanged(active: number, waiting: number): void {
    this.metrics?.slotsChanged(active, waiting);
  }
}

/**
 * The runtime's OpenTelemetry hooks, or undefined when no tracer or meter
 * provider is registered: decided once, when the runtime is built.
 */
export function otelHooks(maxProcesses: number, now: () => number): PoolHooks | undefined {
  const tracing = tracingOn();
  const measuring = metricsOn();
  if (!tracing && !measuring) return undefined;
  return new OtelHooks(
    tracing ? trace.getTracer("procpool", VERSION) : undefined,
    measuring ? new PoolMetrics(maxProcesses) : undefined,
    maxProcesses,
    now,
  );
}
