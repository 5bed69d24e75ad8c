// Huge and compressed requests over connect-node's protocols (Connect binary and JSON, gRPC-Web, compressed
// gRPC) meet the gRPC fast path's early limits, with its errors in each protocol's shape (docs/production.md
// "Hostile clients", issue 29): refused from their bytes, before protobuf-es decodes the whole message, so
// that other clients keep being served.
import { request as http1Request } from "node:http";
import { connect as connectHttp2, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http2";
import { brotliCompressSync, gzipSync } from "node:zlib";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";

const RULES =
  "domain: hostile\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000000000 }\n";
const RLS = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

/** A length-delimited protobuf field (tag byte, varint length, bytes). */
function field(tag: number, bytes: Buffer): Buffer {
  const length: number[] = [];
  let n = bytes.length;
  while (n >= 0x80) {
    length.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  length.push(n);
  return Buffer.concat([Buffer.from([tag, ...length]), bytes]);
}

/** A `RateLimitRequest` for domain `hostile` with `count` descriptors `k=<value>`. */
function requestBytes(count: number, value = "v"): Buffer {
  const entry = field(0x0a, Buffer.concat([field(0x0a, Buffer.from("k")), field(0x12, Buffer.from(value))]));
  const descriptor = field(0x12, entry);
  return Buffer.concat([field(0x0a, Buffer.from("hostile")), ...Array(count).fill(descriptor)]);
}
const jsonRequest = (count: number) =>
  Buffer.from(
    JSON.stringify({
      domain: "hostile",
      descriptors: Array.from({ length: count }, () => ({ entries: [{ key: "k", value: "v" }] })),
    }),
  );
const envelope = (message: Buffer, flag = 0) => {
  const frame = Buffer.alloc(5 + message.length);
  frame[0] = flag;
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
};

// 140,000 descriptors of 24 bytes: 3.4 MB, under the 4 MiB message limit (the request).
const BOMB = requestBytes(140_000, "v".repeat(15));
const TOO_MANY = "rate limit request has more than 256 descriptors";

const dir = t.testdir({ config: { "r.yaml": RULES } });
const daemon = await startDaemon({ RUNTIME_ROOT: dir });
t.teardown(() => daemon.stop());

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One HTTP/1.1 POST on its own connection. */
function post1(path: string, headers: OutgoingHttpHeaders, body: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http1Request(
      { host: "127.0.0.1", port: daemon.grpcPort, method: "POST", path, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** One HTTP/2 POST on its own connection; trailers merged into the headers. */
function post2(path: string, headers: OutgoingHttpHeaders, body: Buffer): Promise<Reply> {
  const session = connectHttp2(`http://127.0.0.1:${daemon.grpcPort}`);
  session.on("error", () => {});
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "POST", ":path": path, ...headers });
    const reply: Reply = { status: 0, headers: {}, body: Buffer.alloc(0) };
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      reply.status = Number(h[":status"]);
      Object.assign(reply.headers, h);
    });
    stream.on("trailers", (h) => Object.assign(reply.headers, h));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", reject);
    stream.on("close", () => {
      reply.body = Buffer.concat(chunks);
      session.close();
      resolve(reply);
    });
    stream.end(body);
  });
}

/** gRPC-Web's status and message, from the trailers frame (flag 0x80) in the body. */
function grpcWebStatus(body: Buffer): [string | undefined, string | undefined] {
  let at = 0;
  while (at + 5 <= body.length) {
    const length = body.readUInt32BE(at + 1);
    if (body[at] === 0x80) {
      const lines = body.toString("utf8", at + 5, at + 5 + length).split("\r\n");
      const value = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
      const message = value("grpc-message");
      return [value("grpc-status"), message === undefined ? undefined : decodeURIComponent(message)];
    }
    at += 5 + length;
  }
  return [undefined, undefined];
}

/**
 * Plain gRPC calls (the fast path) on one HTTP/2 connection, one after another for as long as `during`
 * runs: resolves with `during`'s result and how many calls were answered OK meanwhile (a call answered
 * otherwise rejects).
 */
async function servedMeanwhile<T>(during: () => Promise<T>): Promise<{ result: T; served: number }> {
  const session = connectHttp2(`http://127.0.0.1:${daemon.grpcPort}`);
  session.on("error", () => {});
  const call = () =>
    new Promise<void>((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": RLS,
        "content-type": "application/grpc",
        te: "trailers",
      });
      stream.on("trailers", (h) =>
        h["grpc-status"] === "0" ? resolve() : reject(new Error(String(h["grpc-status"]))),
      );
      stream.on("error", reject);
      stream.resume();
      stream.end(envelope(requestBytes(1)));
    });
  await call();
  let served = 0;
  let done = false;
  const loop = (async () => {
    while (!done) {
      await call();
      served++;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  const result = await during();
  done = true;
  await loop;
  session.close();
  return { result, served };
}

t.test("140,000 descriptors over Connect binary on HTTP/1.1: refused, others served", async (t) => {
  const { result, served } = await servedMeanwhile(async () => {
    const first = await post1(RLS, { "content-type": "application/proto" }, BOMB);
    const second = await post1(RLS, { "content-type": "application/proto" }, BOMB);
    return [first, second];
  });
  for (const reply of result) {
    t.strictSame(
      [reply.status, reply.headers["content-type"], JSON.parse(reply.body.toString())],
      [400, "application/json", { code: "invalid_argument", message: TOO_MANY }],
      "Connect's error body with the fast path's text",
    );
  }
  // How long those calls took is measured in bench/hostile/victim-latency.mjs, not here (timings are flaky
  // on a busy machine); that the refusal comes before the whole message is decoded is shown by
  // test/unit/transports/early-request-limits.test.ts.
  t.ok(served > 0, `${served} calls served meanwhile`);
});

t.test("every other shape of the bomb gets the fast path's INVALID_ARGUMENT", async (t) => {
  const grpcWeb = await post1(RLS, { "content-type": "application/grpc-web+proto" }, envelope(BOMB));
  t.strictSame(
    [grpcWeb.status, ...grpcWebStatus(grpcWeb.body)],
    [200, "3", TOO_MANY],
    "gRPC-Web over HTTP/1.1",
  );
  const gzipped = await post2(
    RLS,
    { "content-type": "application/grpc", "grpc-encoding": "gzip", te: "trailers" },
    envelope(gzipSync(BOMB), 1),
  );
  t.strictSame(
    [gzipped.headers["grpc-status"], decodeURIComponent(String(gzipped.headers["grpc-message"]))],
    ["3", TOO_MANY],
    "gzip-compressed gRPC",
  );
  const connectGzip = await post1(
    RLS,
    { "content-type": "application/proto", "content-encoding": "gzip" },
    gzipSync(BOMB),
  );
  t.strictSame(
    [connectGzip.status, JSON.parse(connectGzip.body.toString())],
    [400, { code: "invalid_argument", message: TOO_MANY }],
    "gzip-compressed Connect binary",
  );
  const json = await post1(RLS, { "content-type": "application/json" }, jsonRequest(100_000));
  t.strictSame(
    [json.status, JSON.parse(json.body.toString())],
    [400, { code: "invalid_argument", message: TOO_MANY }],
    "Connect JSON, 100,000 descriptors (3.8 MB)",
  );
  const brotli = await post1(
    RLS,
    { "content-type": "application/proto", "content-encoding": "br" },
    brotliCompressSync(BOMB),
  );
  t.strictSame(
    [brotli.status, JSON.parse(brotli.body.toString())],
    [400, { code: "invalid_argument", message: TOO_MANY }],
    "brotli-compressed Connect binary",
  );
  const grpcWebJson = await post1(
    RLS,
    { "content-type": "application/grpc-web+json" },
    envelope(jsonRequest(100_000)),
  );
  t.strictSame(
    [grpcWebJson.status, ...grpcWebStatus(grpcWebJson.body)],
    [200, "3", TOO_MANY],
    "gRPC-Web with JSON messages",
  );
  const longValue = await post2(
    RLS,
    { "content-type": "application/proto" },
    requestBytes(1, "x".repeat(9000)),
  );
  t.strictSame(
    [longValue.status, JSON.parse(longValue.body.toString())],
    [400, { code: "invalid_argument", message: "descriptor 0 entry 0: value is longer than 8192 bytes" }],
    "an entry over MAX_DESCRIPTOR_ENTRY_BYTES, Connect binary over HTTP/2",
  );
  const served = await post2(RLS, { "content-type": "application/proto" }, requestBytes(3));
  t.equal(served.status, 200, "a request within the limits is served as before");
});

t.test(
  "messages over 4 MiB, sent or after decompression: RESOURCE_EXHAUSTED as on the fast path",
  async (t) => {
    const big = Buffer.alloc(5 * 1024 * 1024);
    const connect = await post1(RLS, { "content-type": "application/proto" }, big);
    t.strictSame(
      [connect.status, JSON.parse(connect.body.toString())],
      [
        429,
        {
          code: "resource_exhausted",
          message: "grpc: received message larger than max (5242880 vs. 4194304)",
        },
      ],
      "Connect binary",
    );
    const grpcWeb = await post1(RLS, { "content-type": "application/grpc-web+proto" }, envelope(big));
    t.strictSame(
      grpcWebStatus(grpcWeb.body),
      ["8", "grpc: received message larger than max (5242880 vs. 4194304)"],
      "gRPC-Web",
    );
    const expanding = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    const gzipped = await post2(
      RLS,
      { "content-type": "application/grpc", "grpc-encoding": "gzip", te: "trailers" },
      envelope(expanding, 1),
    );
    t.strictSame(
      [gzipped.headers["grpc-status"], decodeURIComponent(String(gzipped.headers["grpc-message"]))],
      ["8", "grpc: received message after decompression larger than max 4194304"],
      `16 MiB gzipped into ${expanding.length} bytes, gRPC`,
    );
    const connectGzip = await post1(
      RLS,
      { "content-type": "application/proto", "content-encoding": "gzip" },
      expanding,
    );
    t.strictSame(
      [connectGzip.status, JSON.parse(connectGzip.body.toString())],
      [
        429,
        {
          code: "resource_exhausted",
          message: "grpc: received message after decompression larger than max 4194304",
        },
      ],
      "the same over Connect",
    );
    t.notMatch(daemon.logs(), /uncaught|unhandled|failed/i, "nothing logged");
  },
);
