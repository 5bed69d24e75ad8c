// Tracing's sampling and exporters (docs/production.md "Tracing"): ParentBased(TraceIdRatioBased(TRACING_SAMPLING_RATE))
// — with rate 0 only calls whose caller sampled are traced; Connect calls get the same spans; and
// TRACING_EXPORTER_PROTOCOL=grpc exports over OTLP/gRPC.
import { randomBytes } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import t from "tap";
import { RateLimitService } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { startOtlpGrpcCollector } from "../helpers/otlp-grpc-collector.js";
import { type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.js";

const RULES =
  "domain: smp\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 10 }\n";
const request = { domain: "smp", descriptors: [{ entries: [{ key: "k", value: "v" }] }] };
const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const withParent = (traceId: string, flags: string) => {
  const metadata = new grpc.Metadata();
  metadata.set("traceparent", `00-${traceId}-${hex(8)}-${flags}`);
  return metadata;
};
const dir = t.testdir({ config: { "rules.yaml": RULES } });

t.test("TRACING_SAMPLING_RATE=0: only calls with a sampled parent are traced", async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const daemon = await startDaemon({
    RUNTIME_ROOT: dir,
    TRACING_ENABLED: "true",
    TRACING_SAMPLING_RATE: "0",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: "50",
  });
  t.teardown(() => daemon.stop());
  const rls = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
  t.teardown(() => rls.close());
  const [unsampled, sampled] = [hex(16), hex(16)];
  await rls.shouldRateLimit(request);
  await rls.shouldRateLimit(request, withParent(unsampled, "00"));
  await rls.shouldRateLimit(request, withParent(sampled, "01"));
  const spans = await receiver.waitForSpans((s) => s.traceId === sampled, 3);
  t.strictSame(spans.map((s) => s.name).sort(), [
    "Memory Increment Execution",
    "ShouldRateLimit Execution",
    "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
  ]);
  t.strictSame(
    spans.find((s) => s.name === "Memory Increment Execution")?.attributes,
    { "keys length": 1 },
    "the memory backend's span",
  );
  // The sampled call came last and its spans are exported: anything from the first two would be here.
  t.strictSame(
    receiver.spans.filter((s) => s.traceId !== sampled).map((s) => s.name),
    [],
    "no spans without a sampled parent",
  );
});

t.test("Connect calls are traced like gRPC calls", async (t) => {
  t.comment("begin", performance.now());
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const daemon = await startDaemon({
    RUNTIME_ROOT: dir,
    TRACING_ENABLED: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: "50",
  });
  t.teardown(() => daemon.stop());
  t.comment("started", performance.now());
  const traceId = hex(16);
  const transport = createConnectTransport({
    baseUrl: `http://127.0.0.1:${daemon.grpcPort}`,
    httpVersion: "1.1",
  });
  await createClient(RateLimitService, transport).shouldRateLimit(request, {
    headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
  });
  const spans = await receiver.waitForSpans((s: ReceivedSpan) => s.traceId === traceId, 3);
  const server = spans.find((s) => s.name === "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit");
  t.strictSame(server?.attributes, {
    "rpc.system": "grpc",
    "rpc.service": "envoy.service.ratelimit.v3.RateLimitService",
    "rpc.method": "ShouldRateLimit",
    "rpc.grpc.status_code": 0,
  });
  const decision = spans.find((s) => s.name === "ShouldRateLimit Execution");
  t.equal(decision?.parentSpanId, server?.spanId, "the decision runs inside the call's span");
});

t.test("TRACING_EXPORTER_PROTOCOL=grpc exports over OTLP/gRPC", async (t) => {
  const collector = await startOtlpGrpcCollector();
  t.teardown(() => collector.close());
  const daemon = await startDaemon({
    RUNTIME_ROOT: dir,
    TRACING_ENABLED: "true",
    TRACING_EXPORTER_PROTOCOL: "grpc",
    TRACING_SERVICE_NAME: "rl-grpc-export",
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: "50",
  });
  t.teardown(() => daemon.stop());
  const rls = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
  t.teardown(() => rls.close());
  await rls.shouldRateLimit(request);
  const exported = await collector.waitForText("ShouldRateLimit Execution");
  t.ok(exported.includes("rl-grpc-export"), "the resource's service.name");
  t.ok(exported.includes("envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit"), "the server span");
});
