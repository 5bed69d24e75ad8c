// GRPC_MAX_CONNECTION_AGE and _GRACE (docs/production.md "Connection ageing"; grpc-go keepalive): an HTTP/2 connection
// gets GOAWAY once it is older than the age (±10 % jitter); calls already started complete; whatever is still
// open after the grace is closed; gRPC clients move to a new connection without failing a call (a call racing
// the GOAWAY is refused unprocessed, and they retry it).
import { type ClientHttp2Session, type ClientHttp2Stream, connect as connectHttp2 } from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import t from "tap";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
  RateLimitService,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";

const AGE_MS = 600;
const GRACE_MS = 1500;
const LIMIT = 1_000_000;
const RULES = `domain: age\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: ${LIMIT} }\n`;
const dir = t.testdir({ config: { "rules.yaml": RULES } });
const daemon = await startDaemon({
  RUNTIME_ROOT: dir,
  GRPC_MAX_CONNECTION_AGE: `${AGE_MS}ms`,
  GRPC_MAX_CONNECTION_AGE_GRACE: `${GRACE_MS}ms`,
});
t.teardown(() => daemon.stop());

const message = toBinary(
  RateLimitRequestSchema,
  create(RateLimitRequestSchema, { domain: "age", descriptors: [{ entries: [{ key: "k", value: "v" }] }] }),
);
const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);

/** Opens a ShouldRateLimit stream whose request body is not sent yet. */
function openCall(session: ClientHttp2Session): ClientHttp2Stream {
  return session.request({
    ":method": "POST",
    ":path": "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
    "content-type": "application/grpc",
    te: "trailers",
  });
}

/** Sends the request on `stream` and resolves with grpc-status and the decoded response's overall code. */
function finishCall(stream: ClientHttp2Stream): Promise<{ status: string; overallCode: number | undefined }> {
  const chunks: Buffer[] = [];
  let status = "";
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  stream.on("trailers", (trailers) => (status = String(trailers["grpc-status"])));
  stream.end(frame);
  return new Promise((resolve, reject) => {
    stream.on("error", reject);
    stream.on("close", () => {
      const body = Buffer.concat(chunks);
      const overallCode =
        body.length > 5 ? fromBinary(RateLimitResponseSchema, body.subarray(5)).overallCode : undefined;
      resolve({ status, overallCode });
    });
  });
}

/** Milliseconds from `since` until the session's `goaway` event, and its error code. */
function goawayOf(session: ClientHttp2Session, since: number): Promise<{ afterMs: number; code: number }> {
  return new Promise((resolve) =>
    session.once("goaway", (code: number) => resolve({ afterMs: performance.now() - since, code })),
  );
}

t.test("GOAWAY (NO_ERROR) at the age; a call started before it completes", async (t) => {
  const opened = performance.now();
  const session = connectHttp2(`http://127.0.0.1:${daemon.grpcPort}`);
  session.on("error", () => {});
  const goaway = goawayOf(session, opened);
  const inFlight = openCall(session);
  const { afterMs, code } = await goaway;
  t.equal(code, 0, "NO_ERROR");
  t.ok(afterMs >= AGE_MS * 0.9 - 5, `not before the age minus 10 % (${Math.round(afterMs)} ms)`);
  t.strictSame(await finishCall(inFlight), { status: "0", overallCode: 1 }, "the call in flight is answered");
  await new Promise<void>((resolve) => (session.closed ? resolve() : session.once("close", resolve)));
  t.pass("the connection closes once its calls are done");
});

t.test("a call still open after the grace is cut with its connection", async (t) => {
  const session = connectHttp2(`http://127.0.0.1:${daemon.grpcPort}`);
  session.on("error", () => {});
  const goaway = goawayOf(session, performance.now());
  const stalled = openCall(session);
  stalled.on("error", () => {});
  const closed = new Promise<number>((resolve) => session.once("close", () => resolve(performance.now())));
  await goaway;
  const goawayAt = performance.now();
  const closedAt = await closed;
  t.ok(
    closedAt - goawayAt >= GRACE_MS - 50,
    `closed after the grace (${Math.round(closedAt - goawayAt)} ms)`,
  );
  t.ok(stalled.destroyed, "the stalled call is gone");
});

t.test("a gRPC client keeps working across connection ages", async (t) => {
  // grpc-js, like grpc-go, retries a call its server refused unprocessed (REFUSED_STREAM, see below).
  const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
  t.teardown(() => client.close());
  const request = { domain: "age", descriptors: [{ entries: [{ key: "k", value: "grpc-js" }] }] };
  const { ok, failures } = await callsDuring(AGE_MS * 3, 4, async () => {
    const response = await client.shouldRateLimit(request);
    if (response.overall_code !== "OK") throw new Error(`answered ${response.overall_code}`);
  });
  t.strictSame(failures, [], `${ok} calls over three connection ages, none failed`);
  t.ok(ok >= 10, `${ok} calls`);
});

// Node's HTTP/2 cannot send grpc-go's two-phase GOAWAY (a first one announcing the shutdown while new
// streams are still accepted, the final one a round trip later): a call that a client starts while the GOAWAY
// is on its way is refused with REFUSED_STREAM, which HTTP/2 defines as "not processed, safe to retry".
t.test("a call racing the GOAWAY is refused unprocessed, never failed after counting", async (t) => {
  const client = createClient(
    RateLimitService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${daemon.grpcPort}` }),
  );
  const request = { domain: "age", descriptors: [{ entries: [{ key: "k", value: "no-retry" }] }] };
  // connect-node does not retry: back-to-back calls show what a client without retries sees.
  const { ok, failures } = await callsDuring(AGE_MS * 3, 4, () => client.shouldRateLimit(request));
  t.strictSame(
    failures.filter((f) => !f.includes("NGHTTP2_REFUSED_STREAM")),
    [],
    `every failure is a refused stream (${failures.length} of ${ok + failures.length} calls)`,
  );
  // The check call may race a GOAWAY too (the third one is due about when the loops stop): a refused stream
  // was not processed, so it is sent again, as a retrying client would; the refused attempts must not count.
  const last = await retryingRefused(() => client.shouldRateLimit(request));
  t.equal(last.statuses[0]?.limitRemaining, LIMIT - ok - 1, "only the answered calls were counted");
});

/** `call`, sent again while the server refuses it unprocessed (REFUSED_STREAM), up to five attempts. */
async function retryingRefused<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= 5 || !String(error).includes("NGHTTP2_REFUSED_STREAM")) throw error;
    }
  }
}

/** Runs `call` back to back on `loops` loops for `ms`; the answered calls and the failures' texts. */
async function callsDuring(ms: number, loops: number, call: () => Promise<unknown>) {
  const end = performance.now() + ms;
  let ok = 0;
  const failures: string[] = [];
  const loop = async () => {
    while (performance.now() < end) {
      try {
        await call();
        ok++;
      } catch (error) {
        failures.push(String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: loops }, loop));
  return { ok, failures };
}
