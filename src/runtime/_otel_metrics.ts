// The `procpool.*` metrics. Instruments are made once per module; each
// runtime is one attribute set, `{ "procpool.runtime": n }` (n counts runtimes
// built with metrics on), so that two runtimes' gauges do not overwrite each
// other. No process ids: the attribute sets stay small and bounded.
import {
  type Attributes,
  type Counter,
  type Histogram,
  metrics,
  type ObservableResult,
} from "@opentelemetry/api";

/** Seconds, after OpenTelemetry's semantic conventions for durations. */
const DURATION_BUCKETS = [
  0,
  0.001,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30,
  60,
];

interface Instruments {
  readonly started: Counter;
  readonly succeeded: Counter;
  readonly failed: Counter;
  readonly cancelled: Counter;
  readonly waitTime: Histogram;
  readonly runTime: Histogram;
}

let instruments: Instruments | undefined;
/** Weak, so that a runtime nobody holds any more stops being reported. */
const live = new Set<WeakRef<PoolMetrics>>();
let nextRuntime = 1;

function observe(result: ObservableResult, read: (pool: PoolMetrics) => number): void {
  for (const ref of live) {
    const pool = ref.deref();
    if (pool === undefined) live.delete(ref);
    else result.observe(read(pool), pool.attributes);
  }
}

function makeInstruments(): Instruments {
  const meter = metrics.getMeter("procpool", "0.1.0");
  meter.createObservableGauge("procpool.active", {
    description: "Processes holding a slot",
    unit: "{process}",
  }).addCallback((result) => observe(result, (pool) => pool.active));
  meter.createObservableGauge("procpool.waiting", {
    description: "Forks waiting for a slot",
    unit: "{fork}",
  }).addCallback((result) => observe(result, (pool) => pool.waiting));
  meter.createObservableGauge("procpool.max", {
    description: "The runtime's capacity (maxProcesses)",
    unit: "{slot}",
  }).addCallback((result) => observe(result, (pool) => pool.max));
  const counter = (name: string, description: string) =>
    meter.createCounter(`procpool.${name}`, { description, unit: "{process}" });
  const histogram = (name: string, description: string) =>
    meter.createHistogram(`procpool.${name}`, {
      description,
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
  return {
    started: counter("started", "Processes that took a slot"),
    succeeded: counter("succeeded", "Processes that returned"),
    failed: counter("failed", "Processes that threw without being cancelled"),
    cancelled: counter("cancelled", "Processes that stopped after a cancel or timeout"),
    waitTime: histogram("wait.duration", "Time from fork to slot, on the runtime's clock"),
    runTime: histogram("run.duration", "Time from slot to stop, on the runtime's clock"),
  };
}

/** One runtime's metrics. */
export class PoolMetrics {
  readonly attributes: Attributes;
  readonly #instruments: Instruments;
  readonly #outcomeAttributes: Record<string, Attributes>;
  active = 0;
  waiting = 0;

  constructor(readonly max: number) {
    this.#instruments = instruments ??= makeInstruments();
    const runtime = nextRuntime++;
    this.attributes = { "procpool.runtime": runtime };
    this.#outcomeAttributes = Object.fromEntries(
      ["succeeded", "failed", "cancelled"].map((outcome) => [
        outcome,
        { "procpool.runtime": runtime, "procpool.process.outcome": outcome },
      ]),
    );
    live.add(new WeakRef(this));
  }

  slotsChanged(active: number, waiting: number): void {
    this.active = active;
    this.waiting = waiting;
  }

  started(waitedMs: number): void {
    this.#instruments.started.add(1, this.attributes);
    this.#instruments.waitTime.record(waitedMs / 1000, this.attributes);
  }

  stopped(status: string, ranMs: number): void {
    const instruments = this.#instruments;
    if (status === "succeeded") instruments.succeeded.add(1, this.attributes);
    else if (status === "failed") instruments.failed.add(1, this.attributes);
    else instruments.cancelled.add(1, this.attributes);
    instruments.runTime.record(ranMs / 1000, this.#outcomeAttributes[status]);
  }
}
