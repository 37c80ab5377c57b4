// OpenTelemetry end to end: a child process runs tests/fixtures/otel_app.ts
// with Deno's built-in exporter pointed at a receiver here on loopback, and
// the test reads the spans and metrics it posted (OTLP/HTTP JSON).
import { assert, assertEquals } from "@std/assert";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  name: string;
  spanId: string;
  parentSpanId?: string;
  traceId: string;
  attributes?: OtlpAttribute[];
  status?: { code?: number; message?: string };
  events?: { name: string; attributes?: OtlpAttribute[] }[];
}
interface OtlpPoint {
  attributes?: OtlpAttribute[];
  asInt?: string | number;
  asDouble?: number;
  count?: string | number;
}
interface OtlpMetric {
  name: string;
  sum?: { dataPoints: OtlpPoint[] };
  gauge?: { dataPoints: OtlpPoint[] };
  histogram?: { dataPoints: OtlpPoint[] };
}

function value(v: OtlpValue): unknown {
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.stringValue ?? v.doubleValue ?? v.boolValue;
}

function attrs(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));
}

function eventOf(span: OtlpSpan, name: string): { name: string; attributes?: OtlpAttribute[] } {
  const found = span.events?.find((event) => event.name === name);
  if (found === undefined) throw new Error(`${span.name} has no ${name} event`);
  return found;
}

function pointValue(point: OtlpPoint): number {
  return Number(point.asInt ?? point.asDouble ?? point.count);
}

/** Runs the fixture app against a fresh receiver; returns what was posted, by path. */
async function runApp(env: Record<string, string>): Promise<Map<string, unknown[]>> {
  const posted = new Map<string, unknown[]>();
  const pending = new Set<Promise<unknown>>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const path = new URL(request.url).pathname;
    const body = request.json().then((json) => {
      posted.set(path, [...(posted.get(path) ?? []), json]);
    });
    pending.add(body);
    return body.then(() => Response.json({}), () => new Response("bad json", { status: 400 }));
  });
  try {
    const app = new URL("./fixtures/otel_app.ts", import.meta.url).pathname;
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-net=127.0.0.1", "--allow-env", app],
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${server.addr.port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_METRIC_EXPORT_INTERVAL: "20",
        OTEL_BSP_SCHEDULE_DELAY: "20",
        HOLD_MS: "80",
        ...env,
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(output.stderr);
    assertEquals(output.code, 0, err);
    assertEquals(new TextDecoder().decode(output.stdout).trim(), "done");
    await Promise.allSettled(pending);
  } finally {
    await server.shutdown();
  }
  return posted;
}

function spansOf(posted: Map<string, unknown[]>): OtlpSpan[] {
  // deno-lint-ignore no-explicit-any
  return (posted.get("/v1/traces") ?? []).flatMap((body: any) =>
    // deno-lint-ignore no-explicit-any
    body.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans))
  );
}

function metricsOf(posted: Map<string, unknown[]>, scope: string): OtlpMetric[] {
  // deno-lint-ignore no-explicit-any
  return (posted.get("/v1/metrics") ?? []).flatMap((body: any) =>
    // deno-lint-ignore no-explicit-any
    body.resourceMetrics.flatMap((rm: any) =>
      // deno-lint-ignore no-explicit-any
      rm.scopeMetrics.filter((sm: any) => sm.scope.name === scope).flatMap((sm: any) => sm.metrics)
    )
  );
}

Deno.test("OpenTelemetry through Deno's exporter (OTEL_DENO=true)", async (t) => {
  const posted = await runApp({ OTEL_DENO: "true" });
  const spans = spansOf(posted);
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const named = (name: string) => {
    const found = spans.filter((span) => span.name === name);
    assertEquals(found.length, 1, `one span named ${name}, got ${found.length}`);
    return found[0];
  };
  const parentOf = (span: OtlpSpan) => byId.get(span.parentSpanId ?? "");

  await t.step("span tree: request → runApp → processes, scope → forkAll → items", () => {
    const runApp = named("procpool.runApp");
    const request = parentOf(runApp);
    if (request === undefined) throw new Error("runApp has no parent span");
    assertEquals(attrs(request.attributes)["http.request.method"], "GET");
    for (const name of ["holder", "handed", "doomed", "slow", "victim", "procpool.process"]) {
      assertEquals(parentOf(named(name))?.spanId, runApp.spanId, name);
      assertEquals(named(name).traceId, request.traceId);
    }
    const scope = named("procpool.scope");
    assertEquals(scope.parentSpanId, runApp.spanId);
    const batch = named("procpool.forkAll");
    assertEquals(batch.parentSpanId, scope.spanId);
    assertEquals(attrs(batch.attributes)["procpool.name"], "batch");
    assertEquals(named("batch[0]").parentSpanId, batch.spanId);
    assertEquals(named("batch[1]").parentSpanId, batch.spanId);
  });

  await t.step("a handed-over process's parent is where it was forked, not the releaser", () => {
    const handed = attrs(named("handed").attributes);
    assertEquals(handed["procpool.process.id"], 2);
    assertEquals(handed["procpool.process.outcome"], "succeeded");
    // It waited for "holder" (5 ms) on a pool of one.
    assert((handed["procpool.process.wait_ms"] as number) > 0, JSON.stringify(handed));
    assertEquals(attrs(named("holder").attributes)["procpool.process.wait_ms"], 0);
  });

  await t.step("attributes of a process", () => {
    assertEquals(attrs(named("holder").attributes), {
      "procpool.process.id": 1,
      "procpool.process.name": "holder",
      "procpool.runtime.max_processes": 1,
      "procpool.process.wait_ms": 0,
      "procpool.process.outcome": "succeeded",
    });
    const unnamed = attrs(named("procpool.process").attributes);
    assertEquals(unnamed["procpool.process.name"], undefined);
  });

  await t.step("a failed process: status ERROR and the exception recorded", () => {
    const doomed = named("doomed");
    assertEquals(doomed.status?.code, 2);
    assertEquals(doomed.status?.message, "Error: doomed on purpose");
    const exception = eventOf(doomed, "exception");
    assertEquals(attrs(exception.attributes)["exception.message"], "doomed on purpose");
    assertEquals(attrs(doomed.attributes)["procpool.process.outcome"], "failed");
  });

  await t.step("cancel and timeout: an event with the reason, status not ERROR", () => {
    const victim = named("victim");
    const cancel = eventOf(victim, "procpool.cancel");
    assertEquals(attrs(cancel.attributes)["procpool.cancel.reason"], "Error: no longer needed");
    assertEquals(attrs(victim.attributes)["procpool.process.outcome"], "cancelled");
    assert(victim.status?.code !== 2);
    const slow = named("slow");
    const timeout = eventOf(slow, "procpool.timeout");
    assert(String(attrs(timeout.attributes)["procpool.cancel.reason"]).includes("timeoutMs 2"));
  });

  await t.step("a LangL log is an event of its process's span", () => {
    const log = eventOf(named("holder"), "log");
    assertEquals(attrs(log.attributes), {
      "log.severity": "info",
      "log.message": "holding {what}",
      "log.property.what": "the slot",
    });
  });

  await t.step("metrics: counters, histograms and gauges named procpool.*", () => {
    const metrics = metricsOf(posted, "procpool");
    const last = (name: string) => {
      const points = metrics.filter((metric) => metric.name === name)
        .flatMap((metric) => (metric.sum ?? metric.gauge ?? metric.histogram)!.dataPoints);
      assert(points.length > 0, `no points for ${name}`);
      return points;
    };
    const total = (name: string) => Math.max(...last(name).map(pointValue));
    assertEquals(total("procpool.started"), 8);
    assertEquals(total("procpool.succeeded"), 5);
    assertEquals(total("procpool.failed"), 1);
    assertEquals(total("procpool.cancelled"), 2);
    assertEquals(total("procpool.wait.duration"), 8);
    const runTimes = last("procpool.run.duration");
    const outcomes = new Set(runTimes.map((p) => attrs(p.attributes)["procpool.process.outcome"]));
    assertEquals(outcomes, new Set(["succeeded", "failed", "cancelled"]));
    assertEquals(last("procpool.max").map(pointValue), last("procpool.max").map(() => 1));
    for (const point of last("procpool.active")) assert([0, 1].includes(pointValue(point)));
    for (const point of last("procpool.waiting")) assert([0, 1].includes(pointValue(point)));
    // No process ids on metrics: every attribute set is the runtime (and the outcome).
    for (const metric of metrics) {
      for (const point of (metric.sum ?? metric.gauge ?? metric.histogram)!.dataPoints) {
        for (const key of Object.keys(attrs(point.attributes))) {
          assert(["procpool.runtime", "procpool.process.outcome"].includes(key), key);
        }
      }
    }
  });
});

Deno.test("without OTEL_DENO nothing is sent", async () => {
  const posted = await runApp({});
  assertEquals([...posted.keys()], []);
});
