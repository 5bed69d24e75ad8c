// Tracing on the memcached backend (docs/production.md "Tracing"): one decision shows the gRPC server span with the
// reference's `Memcached Fetch Execution` backend span under it, `keysToGet length` counting the keys read
// (unlimited descriptors read none).
import { randomBytes } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { requireBinaries, startMemcached } from "../helpers/memcached-process.js";
import { startOtlpReceiver } from "../helpers/otlp-receiver.js";

const RULES = `domain: mc
descriptors:
  - key: a
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: b
    rate_limit: { unit: minute, requests_per_unit: 10 }
  - key: free
    rate_limit: { unlimited: true }
`;

if (requireBinaries(t, ["memcached"])) {
  t.test("one decision: server span, decision span and Memcached Fetch Execution", async (t) => {
    const memcached = await startMemcached(t);
    const receiver = await startOtlpReceiver();
    t.teardown(() => receiver.close());
    const daemon = await startDaemon({
      RUNTIME_ROOT: t.testdir({ config: { "rules.yaml": RULES } }),
      BACKEND_TYPE: "memcache",
      MEMCACHE_HOST_PORT: memcached.url,
      TRACING_ENABLED: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: "50",
    });
    t.teardown(() => daemon.stop());
    const rls = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
    t.teardown(() => rls.close());
    const traceId = randomBytes(16).toString("hex");
    const metadata = new grpc.Metadata();
    metadata.set("traceparent", `00-${traceId}-${randomBytes(8).toString("hex")}-01`);
    const descriptors = ["a", "b", "free"].map((key) => ({ entries: [{ key, value: "x" }] }));
    const response = await rls.shouldRateLimit({ domain: "mc", descriptors }, metadata);
    t.equal(response.overall_code, "OK");
    const spans = await receiver.waitForSpans((s) => s.traceId === traceId, 3);
    t.strictSame(spans.map((s) => s.name).sort(), [
      "Memcached Fetch Execution",
      "ShouldRateLimit Execution",
      "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
    ]);
    const server = spans.find((s) => s.name.startsWith("envoy."))!;
    const fetch = spans.find((s) => s.name === "Memcached Fetch Execution")!;
    t.strictSame(fetch.attributes, { "keysToGet length": 2 }, "the two limited keys");
    t.equal(fetch.parentSpanId, server.spanId, "under the server span, as in the reference");
  });
}
