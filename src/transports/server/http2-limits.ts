import { constants, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import { Code } from "@connectrpc/connect";
import { encodeGrpcMessage } from "../grpc-status.js";
import type { OpenStreams } from "./open-streams.js";

/** What one HTTP/2 client may hold open on a port, and all of them in the process (docs/production.md "Hostile clients"). */
export interface Http2Limits {
  /** GRPC_MAX_CONCURRENT_STREAMS: SETTINGS_MAX_CONCURRENT_STREAMS per connection; 0 = none (Node's 2³²−1). */
  readonly maxConcurrentStreams: number;
  /** GRPC_REQUEST_READ_TIMEOUT: time from a stream's HEADERS to the end of its request; 0 = none. */
  readonly requestReadTimeoutMs: number;
  /** GRPC_MAX_CONNECTION_IDLE: GOAWAY after this long without an open stream; 0 = never. */
  readonly maxIdleMs: number;
  /** GRPC_MAX_TOTAL_STREAMS: one count shared by every port of the process; no bound when absent. */
  readonly openStreams?: OpenStreams | undefined;
}

/** No stream cap and no timeouts: Node's own behaviour. */
export const NO_HTTP2_LIMITS: Http2Limits = Object.freeze({
  maxConcurrentStreams: 0,
  requestReadTimeoutMs: 0,
  maxIdleMs: 0,
});

/** The server's HTTP/2 SETTINGS for `limits` (nghttp2 refuses streams beyond the advertised maximum). */
export function http2Settings(limits: Http2Limits): { maxConcurrentStreams?: number } {
  return limits.maxConcurrentStreams > 0 ? { maxConcurrentStreams: limits.maxConcurrentStreams } : {};
}

/** `10s`, `1.5s`, `300ms`: a readable duration for messages. */
export function durationText(ms: number): string {
  return ms >= 1000 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * Bounds the time a client takes to send a stream's whole request. A stream still receiving after
 * `timeoutMs` is answered — DEADLINE_EXCEEDED for gRPC and gRPC-Web, `408 Request Timeout` for anything
 * else — and then reset with NO_ERROR, which asks the client to stop sending (RFC 9113 §8.1). Without
 * this, a stream whose body never ends holds its memory for ever.
 */
export function limitRequestRead(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, timeoutMs: number) {
  if (timeoutMs <= 0) return;
  const timer = setTimeout(answerReadTimeout, timeoutMs, stream, headers, timeoutMs);
  const clear = () => clearTimeout(timer);
  // 'end' is the complete request; 'close' covers resets and lost connections. Each is emitted once, so
  // `on` does what `once` would without allocating a wrapper per stream.
  stream.on("end", clear);
  stream.on("close", clear);
}

function answerReadTimeout(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, timeoutMs: number) {
  if (stream.closed || stream.destroyed) return;
  const message = `request not received in full within ${durationText(timeoutMs)}`;
  if (!stream.headersSent) {
    const contentType = headers["content-type"] ?? "";
    if (contentType.startsWith("application/grpc")) {
      stream.respond(
        {
          ":status": 200,
          "content-type": contentType,
          "grpc-status": String(Code.DeadlineExceeded),
          "grpc-message": encodeGrpcMessage(`grpc: ${message}`),
        },
        { endStream: true },
      );
    } else {
      stream.respond({ ":status": 408, "content-type": "text/plain; charset=utf-8" });
      stream.end(`${message}\n`);
    }
  }
  stream.close(stream.writableEnded ? constants.NGHTTP2_NO_ERROR : constants.NGHTTP2_CANCEL);
}

/**
 * grpc-go's MaxConnectionIdle: once a session has had no open stream for `idleMs` (since its last stream
 * closed, or since it was opened), it gets GOAWAY (NO_ERROR) and closes; clients open a new connection for
 * their next call. Pings do not count as activity. Checked by one timer per session, never per stream.
 */
export function limitSessionIdle(session: Http2Session, idleMs: number): void {
  if (idleMs <= 0) return;
  let open = 0;
  let idleSinceMs = performance.now();
  const onStreamClose = () => {
    if (--open === 0) idleSinceMs = performance.now();
  };
  session.on("stream", (stream: ServerHttp2Stream) => {
    open++;
    stream.on("close", onStreamClose);
  });
  let timer: NodeJS.Timeout;
  const check = () => {
    const idleForMs = open > 0 ? 0 : performance.now() - idleSinceMs;
    if (idleForMs >= idleMs) session.close();
    else arm(idleMs - idleForMs);
  };
  const arm = (delayMs: number) => {
    timer = setTimeout(check, delayMs);
    timer.unref();
  };
  arm(idleMs);
  session.once("close", () => clearTimeout(timer));
}
