// withEarlyRequestLimits (docs/production.md "Hostile clients", issue 29): around connect-node's handler of
// ShouldRateLimit, a request beyond the limits reaches that handler as an empty message with its reason
// under EARLY_REFUSAL, so that protobuf-es never decodes the hostile bytes, whatever the protocol and
// compression; a request within the limits reaches it byte for byte. What these refusals cost other
// clients is measured by bench/hostile/victim-latency.mjs; test/e2e/connect-hostile-clients.test.ts checks
// the answers clients get.
import { gzipSync } from "node:zlib";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import {
  contentTypeMatcher,
  type UniversalHandler,
  type UniversalServerRequest,
} from "@connectrpc/connect/protocol";
import t, { type Test } from "tap";
import { DEFAULT_REQUEST_LIMITS } from "../../../src/engine/request-limits.js";
import { InvalidArgumentError } from "../../../src/errors.js";
import { RateLimitService } from "../../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { EARLY_REFUSAL, withEarlyRequestLimits } from "../../../src/transports/grpc/early-request-limits.js";

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

// The request: 140,000 descriptors of 24 bytes, 3.4 MB, under the 4 MiB message limit.
const BOMB = requestBytes(140_000, "v".repeat(15));
const TOO_MANY = "rate limit request has more than 256 descriptors";
/** What the wrapped handler gets instead of a refused message: none, `{}`, or an empty envelope. */
const NOTHING = Buffer.alloc(0);
const EMPTY_JSON = Buffer.from("{}");
const EMPTY_ENVELOPE = Buffer.alloc(5);

interface Seen {
  readonly header: Record<string, string>;
  readonly body: Buffer;
  /** The refusal's class, its code (ConnectError only) and raw message; undefined if none. */
  readonly refusal: [string, Code | undefined, string] | undefined;
}

/** Passes `request` through withEarlyRequestLimits to a handler that records what it received. */
async function through(
  t: Test,
  request: {
    httpVersion: "1.1" | "2.0";
    header: Record<string, string>;
    body: Buffer;
  },
): Promise<Seen> {
  const seen: Seen[] = [];
  const recording = Object.assign(
    async (received: UniversalServerRequest) => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of received.body as AsyncIterable<Uint8Array>) chunks.push(chunk);
      const refusal = received.contextValues?.get(EARLY_REFUSAL);
      seen.push({
        header: Object.fromEntries(received.header),
        body: Buffer.concat(chunks),
        refusal:
          refusal === undefined
            ? undefined
            : [
                refusal.constructor.name,
                refusal instanceof ConnectError ? refusal.code : undefined,
                refusal instanceof ConnectError ? refusal.rawMessage : refusal.message,
              ],
      });
      return { status: 200 };
    },
    {
      protocolNames: ["connect", "grpc", "grpc-web"],
      service: RateLimitService,
      method: RateLimitService.method.shouldRateLimit,
      requestPath: RLS,
      allowedMethods: ["POST"],
      supportedContentType: contentTypeMatcher(/^application\/(proto|json|grpc.*)$/),
    },
  ) satisfies UniversalHandler;
  const guarded = withEarlyRequestLimits(recording, DEFAULT_REQUEST_LIMITS);
  t.strictSame(
    [guarded.requestPath, guarded.method, guarded.allowedMethods],
    [RLS, RateLimitService.method.shouldRateLimit, ["POST"]],
    "the wrapper keeps connect-node's routing properties",
  );
  const response = await guarded({
    httpVersion: request.httpVersion,
    url: `http://127.0.0.1${RLS}`,
    method: "POST",
    header: new Headers(request.header),
    body: chunked(request.body),
    signal: new AbortController().signal,
    contextValues: createContextValues(),
  });
  t.equal(response.status, 200, "the wrapped handler answered");
  t.equal(seen.length, 1, "the wrapped handler was called once");
  return seen[0]!;
}

/** The body in 16 KiB chunks, as a socket delivers it. */
async function* chunked(body: Buffer): AsyncIterable<Uint8Array> {
  for (let at = 0; at < body.length; at += 16_384) yield body.subarray(at, at + 16_384);
}

const invalid = (message: string): Seen["refusal"] => [InvalidArgumentError.name, undefined, message];
const exhausted = (message: string): Seen["refusal"] => [ConnectError.name, Code.ResourceExhausted, message];

t.test("140,000 descriptors, in every protocol: an empty message and INVALID_ARGUMENT", async (t) => {
  t.strictSame(
    await through(t, {
      httpVersion: "1.1",
      header: { "content-type": "application/proto", "content-length": String(BOMB.length) },
      body: BOMB,
    }),
    { header: { "content-type": "application/proto" }, body: NOTHING, refusal: invalid(TOO_MANY) },
    "Connect binary on HTTP/1.1",
  );
  t.strictSame(
    await through(t, {
      httpVersion: "1.1",
      header: { "content-type": "application/grpc-web+proto" },
      body: envelope(BOMB),
    }),
    {
      header: { "content-type": "application/grpc-web+proto" },
      body: EMPTY_ENVELOPE,
      refusal: invalid(TOO_MANY),
    },
    "gRPC-Web on HTTP/1.1",
  );
  const grpcGzip = { "content-type": "application/grpc", "grpc-encoding": "gzip", te: "trailers" };
  t.strictSame(
    await through(t, { httpVersion: "2.0", header: grpcGzip, body: envelope(gzipSync(BOMB), 1) }),
    { header: grpcGzip, body: EMPTY_ENVELOPE, refusal: invalid(TOO_MANY) },
    "gzip-compressed gRPC: an uncompressed empty envelope",
  );
  t.strictSame(
    await through(t, {
      httpVersion: "1.1",
      header: { "content-type": "application/proto", "content-encoding": "gzip" },
      body: gzipSync(BOMB),
    }),
    { header: { "content-type": "application/proto" }, body: NOTHING, refusal: invalid(TOO_MANY) },
    "gzip-compressed Connect binary: content-encoding dropped with the message",
  );
  const json = jsonRequest(100_000);
  t.equal(json.length, 3_800_036, "100,000 descriptors in JSON: 3.8 MB, under the message limit");
  t.strictSame(
    await through(t, { httpVersion: "1.1", header: { "content-type": "application/json" }, body: json }),
    { header: { "content-type": "application/json" }, body: EMPTY_JSON, refusal: invalid(TOO_MANY) },
    "Connect JSON",
  );
  const hugeJson = jsonRequest(140_000);
  t.strictSame(
    await through(t, { httpVersion: "1.1", header: { "content-type": "application/json" }, body: hugeJson }),
    {
      header: { "content-type": "application/json" },
      body: EMPTY_JSON,
      refusal: exhausted("grpc: received message larger than max (5320036 vs. 4194304)"),
    },
    "Connect JSON with 140,000 descriptors: 5.3 MB, over the message limit",
  );
  t.strictSame(
    await through(t, {
      httpVersion: "2.0",
      header: { "content-type": "application/proto" },
      body: requestBytes(1, "x".repeat(9000)),
    }),
    {
      header: { "content-type": "application/proto" },
      body: NOTHING,
      refusal: invalid("descriptor 0 entry 0: value is longer than 8192 bytes"),
    },
    "an entry over MAX_DESCRIPTOR_ENTRY_BYTES",
  );
});

t.test("a message over 4 MiB, declared or sent, or once decompressed: RESOURCE_EXHAUSTED", async (t) => {
  const big = Buffer.alloc(5 * 1024 * 1024);
  t.strictSame(
    await through(t, { httpVersion: "1.1", header: { "content-type": "application/proto" }, body: big }),
    {
      header: { "content-type": "application/proto" },
      body: NOTHING,
      refusal: exhausted("grpc: received message larger than max (5242880 vs. 4194304)"),
    },
    "Connect binary, 5 MiB sent",
  );
  t.strictSame(
    await through(t, {
      httpVersion: "1.1",
      header: { "content-type": "application/grpc-web+proto" },
      body: envelope(big),
    }),
    {
      header: { "content-type": "application/grpc-web+proto" },
      body: EMPTY_ENVELOPE,
      refusal: exhausted("grpc: received message larger than max (5242880 vs. 4194304)"),
    },
    "gRPC-Web, 5 MiB sent",
  );
  const declared = Buffer.alloc(5 + 100);
  declared.writeUInt32BE(16 * 1024 * 1024, 1);
  t.strictSame(
    await through(t, { httpVersion: "2.0", header: { "content-type": "application/grpc" }, body: declared }),
    {
      header: { "content-type": "application/grpc" },
      body: EMPTY_ENVELOPE,
      refusal: exhausted("grpc: received message larger than max (16777216 vs. 4194304)"),
    },
    "gRPC, 16 MiB declared by the length prefix, 100 bytes sent",
  );
  const expanding = gzipSync(Buffer.alloc(16 * 1024 * 1024));
  t.ok(expanding.length < 20_000, `16 MiB of zeros gzipped into ${expanding.length} bytes`);
  const grpcGzip = { "content-type": "application/grpc", "grpc-encoding": "gzip" };
  const afterDecompression = "grpc: received message after decompression larger than max 4194304";
  t.strictSame(
    await through(t, { httpVersion: "2.0", header: grpcGzip, body: envelope(expanding, 1) }),
    { header: grpcGzip, body: EMPTY_ENVELOPE, refusal: exhausted(afterDecompression) },
    "decompression bomb over gRPC",
  );
  t.strictSame(
    await through(t, {
      httpVersion: "1.1",
      header: { "content-type": "application/proto", "content-encoding": "gzip" },
      body: expanding,
    }),
    {
      header: { "content-type": "application/proto" },
      body: NOTHING,
      refusal: exhausted(afterDecompression),
    },
    "decompression bomb over Connect",
  );
});

t.test("a request within the limits reaches the handler byte for byte, headers untouched", async (t) => {
  const small = requestBytes(3);
  const connect = { "content-type": "application/proto", "content-length": String(small.length) };
  t.strictSame(
    await through(t, { httpVersion: "1.1", header: connect, body: small }),
    { header: connect, body: small, refusal: undefined },
    "Connect binary",
  );
  const limit = requestBytes(256, "v".repeat(8192));
  t.ok(limit.length > 16_384, "several chunks");
  t.strictSame(
    await through(t, {
      httpVersion: "2.0",
      header: { "content-type": "application/grpc" },
      body: envelope(limit),
    }),
    { header: { "content-type": "application/grpc" }, body: envelope(limit), refusal: undefined },
    "gRPC, 256 descriptors with values of 8192 bytes: at the limits",
  );
  const grpcGzip = { "content-type": "application/grpc-web+proto", "grpc-encoding": "gzip" };
  const compressed = envelope(gzipSync(small), 1);
  t.strictSame(
    await through(t, { httpVersion: "1.1", header: grpcGzip, body: compressed }),
    { header: grpcGzip, body: compressed, refusal: undefined },
    "gzip-compressed gRPC-Web: still compressed",
  );
  const json = { "content-type": "application/json", "content-encoding": "gzip" };
  const jsonBody = gzipSync(jsonRequest(256));
  t.strictSame(
    await through(t, { httpVersion: "1.1", header: json, body: jsonBody }),
    { header: json, body: jsonBody, refusal: undefined },
    "gzip-compressed Connect JSON, 256 descriptors",
  );
});
