// MAX_DESCRIPTORS_PER_REQUEST, MAX_ENTRIES_PER_DESCRIPTOR and MAX_DESCRIPTOR_ENTRY_BYTES against the built
// daemon, on every way in: plain gRPC (the fast path, and a message it leaves to protobuf-es), Connect,
// gRPC-Web, compressed gRPC and /json. Each refusal has its exact status and text, counts in service_error,
// and counts no hit.
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  compressionGzip,
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import t from "tap";
import { RateLimitRequestSchema, RateLimitService } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { startDaemon } from "../helpers/daemon-process.js";
import { grpcRaw } from "../helpers/grpc-unary-client.js";
import { httpRequest } from "../helpers/http-request.js";
import { waitForLog } from "../helpers/rules-dir.js";
import { stayInsideWindow } from "../helpers/window-guard.js";

const RULES = "domain: lim\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n";
const dir = t.testdir({ config: { "rules.yaml": RULES } });
const daemon = await startDaemon({
  RUNTIME_ROOT: dir,
  MAX_DESCRIPTORS_PER_REQUEST: "3",
  MAX_ENTRIES_PER_DESCRIPTOR: "2",
  MAX_DESCRIPTOR_ENTRY_BYTES: "16",
});
t.teardown(() => daemon.stop());
const address = `127.0.0.1:${daemon.grpcPort}`;
const baseUrl = `http://${address}`;
const RLS = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

type Request = MessageInitShape<typeof RateLimitRequestSchema>;
const descriptor = (...pairs: [string, string][]) => ({
  entries: pairs.map(([key, value]) => ({ key, value })),
});
/** Each case also carries `k=counted`, which must never be counted. */
const CASES: [string, Request, string][] = [
  [
    "4 descriptors",
    {
      domain: "lim",
      descriptors: [
        descriptor(["k", "counted"]),
        descriptor(["k", "a"]),
        descriptor(["k", "b"]),
        descriptor(["k", "c"]),
      ],
    },
    "rate limit request has more than 3 descriptors",
  ],
  [
    "3 entries",
    {
      domain: "lim",
      descriptors: [descriptor(["k", "counted"]), descriptor(["k", "a"], ["x", "1"], ["y", "2"])],
    },
    "descriptor 1 has more than 2 entries",
  ],
  [
    "a 17-byte value",
    { domain: "lim", descriptors: [descriptor(["k", "counted"]), descriptor(["k", "v".repeat(17)])] },
    "descriptor 1 entry 0: value is longer than 16 bytes",
  ],
  [
    "a 17-byte key",
    { domain: "lim", descriptors: [descriptor(["k", "counted"]), descriptor(["k".repeat(17), "v"])] },
    "descriptor 1 entry 0: key is longer than 16 bytes",
  ],
  [
    "a 17-byte domain",
    { domain: "l".repeat(17), descriptors: [descriptor(["k", "counted"])] },
    "rate limit domain is longer than 16 bytes",
  ],
];

async function serviceErrors(): Promise<number> {
  const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
  return Number(/^ratelimit\.service\.call\.should_rate_limit\.service_error: (\d+)$/m.exec(stats)?.[1] ?? 0);
}

const bytesOf = (request: Request) =>
  Buffer.from(toBinary(RateLimitRequestSchema, create(RateLimitRequestSchema, request)));

await stayInsideWindow(3600, 30);

t.test("plain gRPC: INVALID_ARGUMENT with the text, on the fast path and on protobuf-es's", async (t) => {
  const before = await serviceErrors();
  for (const [name, request, text] of CASES) {
    t.match(await grpcRaw(address, RLS, bytesOf(request)), { code: 3, details: text }, name);
    // Field 15 (unknown) first: the hand-written decoder leaves the message to protobuf-es.
    const unusual = Buffer.concat([Buffer.from([0x78, 0x00]), bytesOf(request)]);
    t.match(await grpcRaw(address, RLS, unusual), { code: 3, details: text }, `${name}, unknown field`);
  }
  t.equal((await serviceErrors()) - before, 2 * CASES.length, "each refusal counted in service_error");
});

const transports: Record<string, Transport> = {
  "Connect binary": createConnectTransport({ baseUrl, httpVersion: "2" }),
  "Connect JSON over HTTP/1.1": createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    useBinaryFormat: false,
  }),
  "gRPC-Web": createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
  "gzip-compressed gRPC": createGrpcTransport({ baseUrl, sendCompression: compressionGzip }),
};

for (const [label, transport] of Object.entries(transports)) {
  t.test(`${label}: INVALID_ARGUMENT with the text`, async (t) => {
    const client = createClient(RateLimitService, transport);
    const before = await serviceErrors();
    for (const [name, request, text] of CASES) {
      const error = await client.shouldRateLimit(request).catch((e: unknown) => e);
      t.ok(error instanceof ConnectError, name);
      t.strictSame(
        [(error as ConnectError).code, (error as ConnectError).rawMessage],
        [Code.InvalidArgument, text],
        name,
      );
    }
    t.equal((await serviceErrors()) - before, CASES.length);
  });
}

t.test("/json: 400 Bad Request, the text in the warn log", async (t) => {
  const before = await serviceErrors();
  for (const [name, request] of CASES) {
    const body = JSON.stringify(request);
    const reply = await httpRequest(daemon.httpPort, "/json", { method: "POST", body });
    t.strictSame({ status: reply.status, body: reply.body }, { status: 400, body: "Bad Request\n" }, name);
  }
  t.equal((await serviceErrors()) - before, CASES.length);
  // At most a line a second: the first refusal at once, then the latest with the count of the others.
  await waitForLog(daemon.logs, /msg="error: rate limit request has more than 3 descriptors"/);
  await waitForLog(
    daemon.logs,
    /msg="error: rate limit domain is longer than 16 bytes \(and 3 more in the last 1\.\d s\)"/,
  );
});

t.test("requests at the limits are served, and no refused request counted a hit", async (t) => {
  const client = createClient(RateLimitService, createGrpcTransport({ baseUrl }));
  const atLimits = await client.shouldRateLimit({
    domain: "l".repeat(16),
    descriptors: [
      descriptor(["k", "1"]),
      descriptor(["k", "2"]),
      descriptor(["k".repeat(16), "v".repeat(16)], ["x", ""]),
    ],
  });
  t.equal(atLimits.overallCode, 1);
  const counted = await client.shouldRateLimit({
    domain: "lim",
    descriptors: [descriptor(["k", "counted"])],
  });
  t.equal(counted.statuses[0]!.limitRemaining, 4, "the first hit of k=counted");
});
