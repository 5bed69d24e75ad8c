// The hand-framed gRPC path: real clients, deadlines, framing errors, and thousands of
// concurrent streams from h2load.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { connect as connectHttp2 } from "node:http2";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import t from "tap";
import { RateLimitRequestSchema, RateLimitService } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";

const RULES =
  "domain: fast\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000000000 }\n";
const PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const message = toBinary(
  RateLimitRequestSchema,
  create(RateLimitRequestSchema, { domain: "fast", descriptors: [{ entries: [{ key: "k", value: "v" }] }] }),
);
const framed = (flags: number, body: Uint8Array, declared = body.length) => {
  const frame = Buffer.alloc(5 + body.length);
  frame[0] = flags;
  frame.writeUInt32BE(declared, 1);
  frame.set(body, 5);
  return frame;
};

const dir = t.testdir({ config: { "r.yaml": RULES } });
const daemon = await startDaemon({ RUNTIME_ROOT: dir });
t.teardown(() => daemon.stop());

t.test("connect-node's gRPC transport (uncompressed: the fast path)", async (t) => {
  const client = createClient(
    RateLimitService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${daemon.grpcPort}` }),
  );
  const response = await client.shouldRateLimit({
    domain: "fast",
    descriptors: [{ entries: [{ key: "k", value: "v" }] }],
  });
  t.equal(response.overallCode, 1);
  const error = await client.shouldRateLimit({ domain: "", descriptors: [] }).catch((e: unknown) => e);
  t.equal((error as ConnectError).code, Code.Unknown);
  t.equal((error as ConnectError).rawMessage, "rate limit domain must not be empty");
});

/** Sends raw HTTP/2 request bytes and collects the response headers and trailers. */
function rawCall(body: Buffer, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const session = connectHttp2(`http://127.0.0.1:${daemon.grpcPort}`);
  const stream = session.request({
    ":method": "POST",
    ":path": PATH,
    "content-type": "application/grpc",
    te: "trailers",
    ...headers,
  });
  const seen: Record<string, unknown> = {};
  stream.on("response", (h) => Object.assign(seen, h));
  stream.on("trailers", (h) => Object.assign(seen, h));
  stream.resume();
  stream.end(body);
  return new Promise((resolve) =>
    stream.on("close", () => {
      session.close();
      resolve(seen);
    }),
  );
}

t.test(
  "framing errors are INTERNAL trailers-only answers; the connection and the daemon carry on",
  async (t) => {
    const cases: [string, Buffer, string][] = [
      ["empty body", Buffer.alloc(0), "grpc: request has no complete message"],
      [
        "compressed flag without grpc-encoding",
        framed(1, message),
        "grpc: compressed flag set without grpc-encoding",
      ],
      ["flag byte neither 0 nor 1", framed(2, message), "grpc: received unexpected payload format 2"],
      [
        "declared length beyond the body",
        framed(0, message, message.length + 10),
        "grpc: request message is truncated",
      ],
      [
        "two messages for a unary method",
        Buffer.concat([framed(0, message), framed(0, message)]),
        "grpc: more than one request message for a unary method",
      ],
    ];
    for (const [name, body, text] of cases) {
      const reply = await rawCall(body);
      t.strictSame(
        [reply[":status"], reply["grpc-status"], reply["grpc-message"]],
        [200, "13", text.replaceAll("%", "%25")],
        name,
      );
    }
    const ok = await rawCall(framed(0, message));
    t.equal(ok["grpc-status"], "0", "a well-formed call still succeeds");
  },
);

t.test("an expired grpc-timeout deadline is DEADLINE_EXCEEDED", async (t) => {
  if (!requireBinaries(t, ["redis-server", "redis-cli"])) return;
  const redis = await startRedis(t);
  const slow = await startDaemon({
    RUNTIME_ROOT: dir,
    BACKEND_TYPE: "redis",
    REDIS_SOCKET_TYPE: "tcp",
    REDIS_URL: redis.url,
    REDIS_TIMEOUT: "5s",
  });
  t.teardown(() => slow.stop());
  await redis.cli("CLIENT", "PAUSE", "600", "WRITE");
  const started = Date.now();
  const reply = await new Promise<Record<string, unknown>>((resolve) => {
    const session = connectHttp2(`http://127.0.0.1:${slow.grpcPort}`);
    const stream = session.request({
      ":method": "POST",
      ":path": PATH,
      "content-type": "application/grpc",
      "grpc-timeout": "200m",
    });
    const seen: Record<string, unknown> = {};
    stream.on("response", (h) => Object.assign(seen, h));
    stream.on("trailers", (h) => Object.assign(seen, h));
    stream.resume();
    stream.end(framed(0, message));
    stream.on("close", () => {
      session.close();
      resolve(seen);
    });
  });
  t.equal(reply["grpc-status"], "4", "DEADLINE_EXCEEDED");
  t.ok(Date.now() - started >= 550, "answered once the work ended, past the deadline");
});

// h2load asks for 2000 streams at once; it keeps to the 1000 the daemon advertises (GRPC_MAX_CONCURRENT_STREAMS).
t.test("h2load: a thousand concurrent streams on one connection, every call answered", async (t) => {
  if (!requireBinaries(t, ["h2load"])) return;
  const bodyFile = join(t.testdirName, "..", `h2load-body-${process.pid}`);
  writeFileSync(bodyFile, framed(0, message));
  const before = (await httpRequest(daemon.debugPort, "/stats")).body;
  const count = (text: string, name = "ratelimit_server\\.ShouldRateLimit\\.total_requests") =>
    Number(new RegExp(`^${name}: (\\d+)$`, "m").exec(text)?.[1] ?? 0);
  const output = await new Promise<string>((resolve, reject) =>
    execFile(
      "h2load",
      [
        "-n",
        "20000",
        "-c",
        "1",
        "-m",
        "2000",
        "-d",
        bodyFile,
        "-H",
        "content-type: application/grpc",
        "-H",
        "te: trailers",
        `http://127.0.0.1:${daemon.grpcPort}${PATH}`,
      ],
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    ),
  );
  t.match(output, /requests: 20000 total, 20000 started, 20000 done, 20000 succeeded, 0 failed, 0 errored/);
  const after = (await httpRequest(daemon.debugPort, "/stats")).body;
  t.equal(count(after) - count(before), 20000, "every call reached ShouldRateLimit");
  const errors = "ratelimit\\.service\\.call\\.should_rate_limit\\.service_error";
  t.equal(count(after, errors) - count(before, errors), 0, "no errors");
});
