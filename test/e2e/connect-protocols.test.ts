// One port, many protocols (docs/endpoints.md, the gRPC row of the ports table): the RLS and health services
// over Connect (JSON and binary), gRPC-Web and compressed gRPC give the same answers as plain gRPC.
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  compressionGzip,
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import {
  createConnectTransport as createWebConnectTransport,
  createGrpcWebTransport as createWebGrpcWebTransport,
} from "@connectrpc/connect-web";
import t from "tap";
import { RateLimitService } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { Health } from "../../src/gen/grpc/health/v1/health_pb.js";
import { startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";

const RULES = `domain: multi
descriptors:
  - key: k
    value: free
    rate_limit: { unlimited: true }
  - key: k
    value: day
    rate_limit: { unit: day, requests_per_unit: 1000 }
`;
const dir = t.testdir({ config: { "rules.yaml": RULES } });
const daemon = await startDaemon({ RUNTIME_ROOT: dir });
t.teardown(() => daemon.stop());
const baseUrl = `http://127.0.0.1:${daemon.grpcPort}`;

const transports: Record<string, Transport> = {
  "Connect JSON over HTTP/1.1": createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    useBinaryFormat: false,
  }),
  "Connect binary over HTTP/2": createConnectTransport({ baseUrl, httpVersion: "2" }),
  "gRPC-Web over HTTP/1.1": createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
  "gzip-compressed gRPC": createGrpcTransport({ baseUrl, sendCompression: compressionGzip }),
  "connect-web Connect (fetch)": createWebConnectTransport({ baseUrl }),
  "connect-web gRPC-Web (fetch)": createWebGrpcWebTransport({ baseUrl }),
};

for (const [name, transport] of Object.entries(transports)) {
  t.test(name, async (t) => {
    const rls = createClient(RateLimitService, transport);
    const free = await rls.shouldRateLimit({
      domain: "multi",
      descriptors: [{ entries: [{ key: "k", value: "free" }] }],
    });
    t.equal(free.overallCode, 1);
    t.equal(free.statuses[0]!.limitRemaining, 4294967295);
    const counted = await rls.shouldRateLimit({
      domain: "multi",
      descriptors: [{ entries: [{ key: "k", value: "day" }] }],
    });
    t.equal(counted.statuses[0]!.currentLimit?.requestsPerUnit, 1000);
    t.ok(counted.statuses[0]!.limitRemaining < 1000, "counted");
    const error = await rls.shouldRateLimit({ domain: "", descriptors: [] }).catch((e: unknown) => e);
    t.ok(error instanceof ConnectError);
    t.equal((error as ConnectError).code, Code.Unknown);
    t.equal((error as ConnectError).rawMessage, "rate limit domain must not be empty");
    const health = createClient(Health, transport);
    t.equal((await health.check({ service: "ratelimit" })).status, 1);
  });
}

t.test("Health/Watch streams the current status over gRPC", async (t) => {
  const health = createClient(Health, createGrpcTransport({ baseUrl }));
  const controller = new AbortController();
  const stream = health.watch({ service: "ratelimit" }, { signal: controller.signal });
  for await (const message of stream) {
    t.equal(message.status, 1, "SERVING");
    break;
  }
  controller.abort();
  const unknown = health.watch({ service: "nope" });
  for await (const message of unknown) {
    t.equal(message.status, 3, "SERVICE_UNKNOWN");
    break;
  }
});

t.test("requests per method are counted under ratelimit_server.<Method>", async (t) => {
  const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
  t.match(stats, /^ratelimit_server\.ShouldRateLimit\.total_requests: (1[89]|[2-9]\d)$/m);
  t.match(stats, /^ratelimit_server\.Check\.total_requests: [1-9]\d*$/m);
});
