// OpenTelemetry tracing (docs/production.md "Tracing"): one decision exported over OTLP/HTTP shows the gRPC server span
// (parent from W3C trace context or B3) with the decision and Redis pipeline spans under it, with the
// reference's names and attributes; /json and Connect calls are traced too.
import { randomBytes } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { httpRequest } from "../helpers/http-request.js";
import { type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";

const RULES = `domain: tr
descriptors:
  - key: k
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: s
    rate_limit: { unit: second, requests_per_unit: 100 }
`;
const SERVER_SPAN = "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const inTrace = (traceId: string) => (span: ReceivedSpan) => span.traceId === traceId;
const named = (spans: ReceivedSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  if (found.length !== 1) throw new Error(`expected one ${name} span, got ${found.length}`);
  return found[0]!;
};

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const redis = await startRedis(t);
  const dir = t.testdir({ config: { "rules.yaml": RULES } });
  const daemon = await startDaemon({
    RUNTIME_ROOT: dir,
    BACKEND_TYPE: "redis",
    REDIS_SOCKET_TYPE: "tcp",
    REDIS_URL: redis.url,
    REDIS_PERSECOND: "true",
    REDIS_PERSECOND_SOCKET_TYPE: "tcp",
    REDIS_PERSECOND_URL: redis.url,
    TRACING_ENABLED: "true",
    TRACING_SERVICE_NAMESPACE: "edge",
    TRACING_SERVICE_INSTANCE_ID: "replica-1",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: "50",
  });
  t.teardown(() => daemon.stop());
  const rls = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
  t.teardown(() => rls.close());
  const twoDescriptors = {
    domain: "tr",
    descriptors: [{ entries: [{ key: "k", value: "hour" }] }, { entries: [{ key: "s", value: "x" }] }],
  };

  t.test("one decision: server span from traceparent, decision and Redis spans under it", async (t) => {
    const [traceId, parentId] = [hex(16), hex(8)];
    const metadata = new grpc.Metadata();
    metadata.set("traceparent", `00-${traceId}-${parentId}-01`);
    await rls.shouldRateLimit(twoDescriptors, metadata);
    const spans = await receiver.waitForSpans(inTrace(traceId), 3);
    t.equal(spans.length, 3, "exactly three spans");
    const server = named(spans, SERVER_SPAN);
    t.equal(server.kind, 2, "SERVER");
    t.equal(server.parentSpanId, parentId, "child of the caller's span");
    t.strictSame(server.attributes, {
      "rpc.system": "grpc",
      "rpc.service": "envoy.service.ratelimit.v3.RateLimitService",
      "rpc.method": "ShouldRateLimit",
      "network.peer.address": "127.0.0.1",
      "network.peer.port": server.attributes["network.peer.port"],
      "rpc.grpc.status_code": 0,
    });
    t.type(server.attributes["network.peer.port"], "number");
    const decision = named(spans, "ShouldRateLimit Execution");
    t.equal(decision.parentSpanId, server.spanId);
    t.strictSame(decision.attributes, {
      domain: "tr",
      "request string":
        'domain:"tr" descriptors:{entries:{key:"k" value:"hour"}} descriptors:{entries:{key:"s" value:"x"}}',
    });
    const pipeline = named(spans, "Redis Pipeline Execution");
    t.equal(pipeline.parentSpanId, server.spanId, "a sibling of the decision span, as in the reference");
    t.strictSame(pipeline.attributes, { "pipeline length": 2, "perSecondPipeline length": 2 });
    t.strictSame(server.resource, {
      "service.name": "RateLimit",
      "service.namespace": "edge",
      "service.instance.id": "replica-1",
    });
    t.equal(receiver.contentTypes[0], "application/json", "OTLP/HTTP with JSON encoding");
  });

  t.test("B3 headers, multi and single, give the parent", async (t) => {
    const [multiTrace, multiParent, singleTrace, singleParent] = [hex(16), hex(8), hex(16), hex(8)];
    const multi = new grpc.Metadata();
    multi.set("x-b3-traceid", multiTrace);
    multi.set("x-b3-spanid", multiParent);
    multi.set("x-b3-sampled", "1");
    await rls.shouldRateLimit(twoDescriptors, multi);
    const single = new grpc.Metadata();
    single.set("b3", `${singleTrace}-${singleParent}-1`);
    await rls.shouldRateLimit(twoDescriptors, single);
    for (const [traceId, parentId] of [
      [multiTrace, multiParent],
      [singleTrace, singleParent],
    ] as const) {
      const spans = await receiver.waitForSpans(inTrace(traceId), 3);
      t.equal(named(spans, SERVER_SPAN).parentSpanId, parentId, `trace ${traceId}`);
    }
  });

  t.test("a refused call: the server span carries UNKNOWN and an error status", async (t) => {
    const traceId = hex(16);
    const metadata = new grpc.Metadata();
    metadata.set("traceparent", `00-${traceId}-${hex(8)}-01`);
    await rls.shouldRateLimit({ domain: "", descriptors: [] }, metadata).catch(() => {});
    const spans = await receiver.waitForSpans(inTrace(traceId), 2);
    const server = named(spans, SERVER_SPAN);
    t.equal(server.attributes["rpc.grpc.status_code"], 2);
    t.equal(server.statusCode, 2, "ERROR");
    t.equal(named(spans, "ShouldRateLimit Execution").statusCode, 2, "the decision failed too");
  });

  t.test("/json: the decision span and NewJsonHandler Remaining Execution with the response", async (t) => {
    const body = JSON.stringify({ domain: "tr", descriptors: [{ entries: [{ key: "k", value: "json" }] }] });
    t.equal((await httpRequest(daemon.httpPort, "/json", { method: "POST", body })).status, 200);
    const [decision] = await receiver.waitForSpans(
      (s) =>
        s.name === "ShouldRateLimit Execution" &&
        s.attributes["request string"] === `domain:"tr" descriptors:{entries:{key:"k" value:"json"}}`,
      1,
    );
    t.equal(decision!.parentSpanId, "", "a root span: /json has no server span, as in the reference");
    const [json] = await receiver.waitForSpans((s) => s.name === "NewJsonHandler Remaining Execution", 1);
    t.match(
      json!.attributes.response,
      /^overall_code:OK statuses:\{code:OK current_limit:\{requests_per_unit:10 unit:HOUR\} limit_remaining:9 duration_until_reset:\{seconds:\d+\}\}$/,
    );
  });
}
