// Hostile clients on the gRPC port, and on the HTTP port where the same limits apply (docs/production.md
// "Hostile clients"): the stream cap advertised in SETTINGS (GRPC_MAX_CONCURRENT_STREAMS), requests that never
// complete (GRPC_REQUEST_READ_TIMEOUT), idle connections (GRPC_MAX_CONNECTION_IDLE), calls dropped
// half-sent, and messages far over the 4 MiB limit.
import { request as httpRequest, type IncomingMessage } from "node:http";
import {
  type ClientHttp2Session,
  connect as connectHttp2,
  constants,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from "node:http2";
import { connect as connectTcp } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import t from "tap";
import { RateLimitRequestSchema } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { type DaemonProcess, startDaemon } from "../helpers/daemon-process.js";
import { httpRequest as get } from "../helpers/http-request.js";
import { rawHttp2Connection } from "../helpers/raw-http2.js";

const RULES =
  "domain: hostile\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000000000 }\n";
const RLS = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const message = toBinary(
  RateLimitRequestSchema,
  create(RateLimitRequestSchema, {
    domain: "hostile",
    descriptors: [{ entries: [{ key: "k", value: "v" }] }],
  }),
);
const framed = (body: Uint8Array, declared = body.length) => {
  const frame = Buffer.alloc(5 + body.length);
  frame.writeUInt32BE(declared, 1);
  frame.set(body, 5);
  return frame;
};
const GRPC_HEADERS = { ":method": "POST", ":path": RLS, "content-type": "application/grpc", te: "trailers" };

const dir = t.testdir({ config: { "r.yaml": RULES } });
const daemon = await startDaemon({ RUNTIME_ROOT: dir });
t.teardown(() => daemon.stop());

/** An HTTP/2 session to `port` whose errors are ignored (tests look at streams and events). */
function session(port: number): ClientHttp2Session {
  const s = connectHttp2(`http://127.0.0.1:${port}`);
  s.on("error", () => {});
  return s;
}

interface Reply {
  headers: IncomingHttpHeaders;
  body: string;
  rstCode: number | undefined;
  error: string | undefined;
}

/**
 * One stream on `on`: sends `headers`, then `body` — ending the request unless `leaveOpen` — and resolves
 * with response headers and trailers merged, the body, and the stream's reset code once it closed.
 */
function exchange(
  on: ClientHttp2Session,
  headers: OutgoingHttpHeaders,
  body: Buffer | undefined,
  leaveOpen = false,
): Promise<Reply> {
  const stream = on.request(headers, { endStream: body === undefined && !leaveOpen });
  const reply: Reply = { headers: {}, body: "", rstCode: undefined, error: undefined };
  stream.on("response", (h) => Object.assign(reply.headers, h));
  stream.on("trailers", (h) => Object.assign(reply.headers, h));
  stream.on("data", (chunk: Buffer) => (reply.body += chunk.toString("latin1")));
  stream.on("error", (error: Error) => (reply.error = error.message));
  if (body !== undefined) {
    if (leaveOpen) stream.write(body);
    else stream.end(body);
  }
  return new Promise((resolve) =>
    stream.on("close", () => {
      reply.rstCode = stream.rstCode;
      resolve(reply);
    }),
  );
}

const statusOf = (reply: Reply) => [
  reply.headers[":status"],
  reply.headers["grpc-status"],
  reply.headers["grpc-message"],
];

/** The daemon's log so far, once a call on a new connection was answered (earlier input is processed). */
async function logsAfterACall(d: DaemonProcess): Promise<string> {
  const s = session(d.grpcPort);
  await exchange(s, GRPC_HEADERS, framed(message));
  s.close();
  return d.logs();
}

t.test("clients dropping half-sent calls leave nothing in the log", async (t) => {
  const before = await logsAfterACall(daemon);
  const s = session(daemon.grpcPort);
  const written: Promise<void>[] = [];
  for (let i = 0; i < 100; i++) {
    const stream = s.request(GRPC_HEADERS);
    stream.on("error", () => {});
    written.push(new Promise((resolve) => stream.write(framed(message).subarray(0, 12), () => resolve())));
  }
  await Promise.all(written);
  const closed = new Promise((resolve) => s.once("close", resolve));
  s.destroy();
  await closed;
  t.equal((await logsAfterACall(daemon)).slice(before.length), "", "no uncaught ERR_HTTP2_INVALID_STREAM");
});

t.test("a 16 MiB message is RESOURCE_EXHAUSTED and the connection stays usable", async (t) => {
  const s = session(daemon.grpcPort);
  let goaway = false;
  s.on("goaway", () => (goaway = true));
  const huge = await exchange(s, GRPC_HEADERS, framed(Buffer.alloc(16 * 1024 * 1024)));
  t.strictSame(
    [...statusOf(huge), huge.error],
    [200, "8", "grpc: received message larger than max (16777216 vs. 4194304)", undefined],
  );
  for (let i = 1; i <= 3; i++) {
    const next = await exchange(s, GRPC_HEADERS, framed(message));
    t.strictSame([next.headers["grpc-status"], next.error], ["0", undefined], `call ${i} afterwards`);
  }
  const declaredOnly = await exchange(s, GRPC_HEADERS, framed(message, 16 * 1024 * 1024));
  t.strictSame(
    statusOf(declaredOnly),
    [200, "8", "grpc: received message larger than max (16777216 vs. 4194304)"],
    "refused by its length prefix alone, as grpc-go does",
  );
  t.equal(goaway, false, "no GOAWAY");
  s.close();
});

t.test("SETTINGS advertise GRPC_MAX_CONCURRENT_STREAMS, 1000 by default, on every port", async (t) => {
  for (const [name, port] of [
    ["gRPC", daemon.grpcPort],
    ["HTTP", daemon.httpPort],
    ["debug", daemon.debugPort],
  ] as const) {
    const s = session(port);
    await new Promise((resolve) => s.once("remoteSettings", resolve));
    t.equal(s.remoteSettings.maxConcurrentStreams, 1000, name);
    s.close();
  }
  const unlimited = await startDaemon({ RUNTIME_ROOT: dir, GRPC_MAX_CONCURRENT_STREAMS: "0" });
  t.teardown(() => unlimited.stop());
  const s = session(unlimited.grpcPort);
  await new Promise((resolve) => s.once("remoteSettings", resolve));
  t.equal(s.remoteSettings.maxConcurrentStreams, 2 ** 32 - 1, "0 leaves Node's default: no limit");
  s.close();
});

t.test("a client opening more streams than advertised gets GOAWAY PROTOCOL_ERROR", async (t) => {
  const capped = await startDaemon({ RUNTIME_ROOT: dir, GRPC_MAX_CONCURRENT_STREAMS: "5" });
  t.teardown(() => capped.stop());
  const raw = rawHttp2Connection(capped.grpcPort);
  await raw.ready;
  t.strictSame(raw.received.settings, { 3: 5 }, "SETTINGS_MAX_CONCURRENT_STREAMS = 5");
  for (let i = 0; i < 6; i++) raw.openStream(RLS);
  await raw.goaway;
  // nghttp2 treats a stream beyond the acknowledged SETTINGS_MAX_CONCURRENT_STREAMS as a connection error.
  // A plain node:http2 server with the same SETTINGS sent this very GOAWAY on Node 22.12.0 (nghttp2 1.64.0)
  // and Node 26.12.1 (nghttp2 1.70.0): PROTOCOL_ERROR (1), last stream 9 (the five streams within the
  // limit), "request HEADERS: max concurrent streams exceeded". Node 26 then closes the connection at
  // once; Node 22.12 leaves the socket open (Node 24 was not tried, so only 26 and later are held to the
  // close). REFUSED_STREAM for that stream alone is not possible on Node:
  // nghttp2 refuses a stream one by one only while its SETTINGS are not yet acknowledged
  // (docs/production.md "Hostile clients", issue 29).
  t.strictSame(
    [raw.received.goawayCode, raw.received.goawayLastStreamId, raw.received.goawayDebug],
    [1, 9, "request HEADERS: max concurrent streams exceeded"],
    "GOAWAY PROTOCOL_ERROR after stream 9",
  );
  if (Number(process.versions.node.split(".")[0]) >= 26) await raw.closed;
  raw.destroy();
  const s = session(capped.grpcPort);
  // Before the SETTINGS arrive a client cannot know the limit (streams beyond it would be refused).
  await new Promise((resolve) => s.once("remoteSettings", resolve));
  const replies = await Promise.all(
    Array.from({ length: 20 }, () => exchange(s, GRPC_HEADERS, framed(message))),
  );
  t.strictSame(
    replies.map((r) => r.headers["grpc-status"]),
    Array(20).fill("0"),
    "20 calls at once from a client that honours the limit all succeed",
  );
  s.close();
});

t.test(
  "GRPC_MAX_TOTAL_STREAMS: the connections that fill the process get REFUSED_STREAM at once",
  async (t) => {
    const bounded = await startDaemon({ RUNTIME_ROOT: dir, GRPC_MAX_TOTAL_STREAMS: "10" });
    t.teardown(() => bounded.stop());
    const stat = async (name: string) => {
      const stats = (await get(bounded.debugPort, "/stats")).body;
      return Number(new RegExp(`^ratelimit_server\\.${name}: (\\d+)$`, "m").exec(stats)?.[1]);
    };
    const halfSent = (on: ClientHttp2Session, headers: OutgoingHttpHeaders = GRPC_HEADERS) =>
      exchange(on, headers, framed(message).subarray(0, 8), true);
    // One connection opens twelve calls and never finishes them: ten are held, the last two refused.
    const hog = session(bounded.grpcPort);
    const held = Array.from({ length: 12 }, () => halfSent(hog));
    const started = performance.now();
    const refused = await Promise.race([
      Promise.all(held.slice(10)),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2000)),
    ]);
    t.ok(performance.now() - started < 1000, "refused at once, not after GRPC_REQUEST_READ_TIMEOUT");
    t.strictSame(
      refused?.map((r) => [r.headers[":status"], r.rstCode]),
      [
        [undefined, constants.NGHTTP2_REFUSED_STREAM],
        [undefined, constants.NGHTTP2_REFUSED_STREAM],
      ],
      "RST_STREAM REFUSED_STREAM, no answer",
    );
    // A second hog, on the HTTP port (one count for the process), connecting while the bound is reached:
    // its SETTINGS already say 5 (10 / 2 connections), and nghttp2 refuses its sixth and seventh streams
    // itself, before they exist in JavaScript (so they are not in refused_streams).
    const json = { ":method": "POST", ":path": "/json", "content-type": "application/json" };
    const httpHog = session(bounded.httpPort);
    const httpHeld = Array.from({ length: 7 }, () => halfSent(httpHog, json));
    const httpRefused = await Promise.all(httpHeld.slice(5));
    t.strictSame(
      httpRefused.map((r) => r.rstCode),
      [constants.NGHTTP2_REFUSED_STREAM, constants.NGHTTP2_REFUSED_STREAM],
      "HTTP port: beyond its share of the bound",
    );
    // Another client, under its share of the bound (10 / 3 connections), is still served.
    const other = session(bounded.grpcPort);
    const served = await exchange(other, GRPC_HEADERS, framed(message));
    t.equal(served.headers["grpc-status"], "0", "a client with nothing in flight is served");
    other.close();
    t.equal(httpHog.remoteSettings.maxConcurrentStreams, 5, "SETTINGS_MAX_CONCURRENT_STREAMS: its share");
    t.equal(hog.remoteSettings.maxConcurrentStreams, 10, "the first hog's share when it reached the bound");
    t.equal(await stat("open_streams"), 15, "ratelimit_server.open_streams");
    t.equal(await stat("refused_streams"), 2, "ratelimit_server.refused_streams");
    t.equal(await stat("streams_bound_reached"), 1, "ratelimit_server.streams_bound_reached");
    t.equal(hog.closed || httpHog.closed, false, "the connections stay open");
    t.match(
      bounded.logs(),
      /refused an HTTP\/2 stream \(REFUSED_STREAM\): 10 streams open, GRPC_MAX_TOTAL_STREAMS/,
      "a warn line",
    );
    t.match(
      bounded.logs(),
      /10 HTTP\/2 streams open \(GRPC_MAX_TOTAL_STREAMS\): each connection may now open 10/,
      "a warn line when the bound was reached",
    );
    t.notMatch(bounded.logs(), /failed|uncaught|unhandled/, "nothing else logged");
    hog.destroy();
    httpHog.destroy();
    await Promise.all([...held.slice(0, 10), ...httpHeld.slice(0, 5)]);
    // The daemon sees the connections go a moment after the client.
    const seen: number[] = [];
    for (let i = 0; i < 100 && seen.at(-1) !== 0; i++) {
      seen.push(await stat("open_streams"));
      if (seen.at(-1) !== 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    t.equal(seen.at(-1), 0, `none open once the hogs left (${seen.join(", ")})`);
    const after = session(bounded.grpcPort);
    await new Promise((resolve) => after.once("remoteSettings", resolve));
    t.equal(after.remoteSettings.maxConcurrentStreams, 1000, "a new connection gets the full cap again");
    after.close();
  },
);

/** A daemon giving clients 300 ms to send a request. */
const impatient = await startDaemon({ RUNTIME_ROOT: dir, GRPC_REQUEST_READ_TIMEOUT: "300ms" });
t.teardown(() => impatient.stop());

t.test("a request that never completes is answered and reset after GRPC_REQUEST_READ_TIMEOUT", async (t) => {
  const text = "request not received in full within 300ms";
  const s = session(impatient.grpcPort);
  const fast = [
    ["headers only", undefined],
    ["half a message", framed(message).subarray(0, 8)],
    ["a 5 MiB message begun, never ended", framed(Buffer.alloc(1024), 5 * 1024 * 1024)],
  ] as const;
  for (const [name, body] of fast) {
    const reply = await exchange(s, GRPC_HEADERS, body, true);
    t.strictSame(statusOf(reply), [200, "4", `grpc: ${text}`], `${name}: DEADLINE_EXCEEDED`);
    t.equal(reply.rstCode, 0, `${name}: then RST_STREAM NO_ERROR`);
  }
  const grpcWeb = await exchange(
    s,
    { ":method": "POST", ":path": RLS, "content-type": "application/grpc-web+proto" },
    undefined,
    true,
  );
  t.strictSame(
    [...statusOf(grpcWeb), grpcWeb.headers["content-type"]],
    [200, "4", `grpc: ${text}`, "application/grpc-web+proto"],
    "gRPC-Web (connect-node): DEADLINE_EXCEEDED",
  );
  const gzip = await exchange(s, { ...GRPC_HEADERS, "grpc-encoding": "gzip" }, undefined, true);
  t.strictSame(statusOf(gzip), [200, "4", `grpc: ${text}`], "compressed gRPC (connect-node)");
  const connect = await exchange(
    s,
    { ":method": "POST", ":path": RLS, "content-type": "application/proto" },
    Buffer.from([0x0a]),
    true,
  );
  t.strictSame([connect.headers[":status"], connect.body], [408, `${text}\n`], "Connect: 408");
  t.equal(connect.rstCode, 0);
  const ok = await exchange(s, GRPC_HEADERS, framed(message));
  t.equal(ok.headers["grpc-status"], "0", "the connection still serves calls");
  s.close();

  const http = session(impatient.httpPort);
  const json = await exchange(
    http,
    { ":method": "POST", ":path": "/json", "content-type": "application/json" },
    Buffer.from('{"domain":'),
    true,
  );
  t.strictSame([json.headers[":status"], json.body, json.rstCode], [408, `${text}\n`, 0], "HTTP port: 408");
  http.close();
  t.notMatch(impatient.logs(), /uncaught|unhandled/, "nothing logged");
});

/** Writes `text` on a new TCP connection to `port` and resolves with everything read until it closes. */
function tcpExchange(port: number, text: string): Promise<string> {
  const socket = connectTcp(port, "127.0.0.1");
  let reply = "";
  socket.on("data", (chunk: Buffer) => (reply += chunk.toString("latin1")));
  socket.on("error", () => {});
  socket.write(text);
  return new Promise((resolve) => socket.on("close", () => resolve(reply)));
}

t.test("HTTP/1.1: headers or a body that never end get 408 after GRPC_REQUEST_READ_TIMEOUT", async (t) => {
  const body = "request not received in full within 300ms\n";
  const expected =
    "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n" +
    `Content-Length: ${body.length}\r\n\r\n${body}`;
  for (const [name, port] of [
    ["gRPC port", impatient.grpcPort],
    ["HTTP port", impatient.httpPort],
  ] as const) {
    t.equal(await tcpExchange(port, "POST /json HTTP/1.1\r\nHost: x\r\n"), expected, `${name}: headers`);
    t.equal(
      await tcpExchange(
        port,
        `POST ${name === "HTTP port" ? "/json" : RLS} HTTP/1.1\r\nHost: x\r\n` +
          "Content-Type: application/proto\r\nContent-Length: 10\r\n\r\nabc",
      ),
      expected,
      `${name}: body`,
    );
  }
  t.notMatch(impatient.logs(), /uncaught|unhandled/, "nothing logged");
});

t.test("calls whose request arrived in full are not cut by GRPC_REQUEST_READ_TIMEOUT", async (t) => {
  // Health/Watch streams its answer for as long as the client stays; a request that never completes,
  // opened after it, is the clock: once that one is refused, the watches are past the timeout.
  const s = session(impatient.grpcPort);
  const watch = s.request({ ...GRPC_HEADERS, ":path": "/grpc.health.v1.Health/Watch" });
  const firstMessage = new Promise((resolve) => watch.once("data", resolve));
  watch.end(Buffer.alloc(5));
  await firstMessage;
  const http1Watch = await new Promise<IncomingMessage>((resolve) =>
    httpRequest(
      {
        host: "127.0.0.1",
        port: impatient.grpcPort,
        method: "POST",
        path: "/grpc.health.v1.Health/Watch",
        headers: { "content-type": "application/connect+proto" },
      },
      resolve,
    ).end(Buffer.alloc(5)),
  );
  await new Promise((resolve) => http1Watch.once("data", resolve));
  const clock = await exchange(s, GRPC_HEADERS, undefined, true);
  t.equal(clock.headers["grpc-status"], "4", "the incomplete request timed out");
  t.equal(watch.closed, false, "the HTTP/2 watch is still open");
  t.equal(http1Watch.socket.destroyed, false, "the HTTP/1.1 watch is still open");
  watch.close(constants.NGHTTP2_CANCEL);
  http1Watch.socket.destroy();
  s.destroy();
});

t.test("GRPC_MAX_CONNECTION_IDLE: GOAWAY once a connection has had no call for that long", async (t) => {
  const idle = await startDaemon({
    RUNTIME_ROOT: dir,
    GRPC_MAX_CONNECTION_IDLE: "300ms",
    GRPC_REQUEST_READ_TIMEOUT: "0",
  });
  t.teardown(() => idle.stop());
  const events: string[] = [];
  const busy = session(idle.grpcPort);
  busy.once("goaway", (code: number) => events.push(`busy GOAWAY ${code}`));
  const pending = busy.request(GRPC_HEADERS);
  const answered = new Promise<string>((resolve) =>
    pending.on("trailers", (h) => resolve(String(h["grpc-status"]))),
  );
  pending.resume();
  await new Promise((resolve) => pending.once("ready", resolve));

  const quiet = session(idle.grpcPort);
  const quietGoaway = new Promise<number>((resolve) => quiet.once("goaway", resolve));
  const quietClosed = new Promise((resolve) => quiet.once("close", resolve));
  t.equal(await quietGoaway, 0, "a connection without calls gets GOAWAY NO_ERROR");
  await quietClosed;
  events.push("quiet closed");

  pending.end(framed(message));
  t.equal(await answered, "0", "the call that kept the other connection busy is answered");
  events.push("busy call done");
  await new Promise((resolve) => busy.once("close", resolve));
  t.strictSame(events, ["quiet closed", "busy call done", "busy GOAWAY 0"], "busy only once its call ended");
});
