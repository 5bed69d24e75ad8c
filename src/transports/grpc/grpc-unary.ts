import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { Code } from "@connectrpc/connect";
import { encodeGrpcMessage, grpcStatusOf } from "../grpc-status.js";
import { MAX_MESSAGE_BYTES } from "../message-limits.js";

/** A unary method served directly on HTTP/2 streams, bypassing connect-node for speed. */
export interface UnaryMethod {
  /** `/package.Service/Method`. */
  readonly path: string;
  /** Method name for `ratelimit_server.<Method>.*` stats. */
  readonly name: string;
  /**
   * Decodes the request message, runs the handler, and gives the complete response frame (5-byte prefix
   * included); throws or rejects on any failure.
   */
  readonly call: (request: Buffer) => Buffer | Promise<Buffer>;
}

/**
 * Called once per answered call with its gRPC status (0 = OK) and, on failure, the status message and the
 * error the method threw (absent when the call was refused before it ran).
 */
export type CallDone = (
  method: UnaryMethod,
  startedMs: number,
  code: number,
  message?: string,
  error?: unknown,
) => void;

const GRPC_CONTENT_TYPES = new Set(["application/grpc", "application/grpc+proto"]);
const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/**
 * Whether a stream is plain uncompressed unary gRPC that the fast path can serve. Everything else
 * (gRPC-Web, Connect, compression, unknown methods) is left to connect-node.
 */
export function isFastPathStream(headers: IncomingHttpHeaders): boolean {
  const encoding = headers["grpc-encoding"];
  return (
    headers[":method"] === "POST" &&
    GRPC_CONTENT_TYPES.has(headers["content-type"] ?? "") &&
    (encoding === undefined || encoding === "identity")
  );
}

/** Milliseconds allowed by a `grpc-timeout` header (`100m`, `5S`), or undefined when absent or invalid. */
export function grpcTimeoutMs(header: string | undefined): number | undefined {
  const match = header === undefined ? null : /^(\d{1,8})([HMSmun])$/.exec(header);
  return match ? Number(match[1]) * TIMEOUT_UNIT_MS[match[2]!]! : undefined;
}

/**
 * Serves one unary call: collects the single length-prefixed message, calls the method, and answers with
 * the message and `grpc-status: 0` trailers, or a trailers-only error. A call whose deadline passed, or
 * whose client went away, gets no answer written.
 *
 * A message over {@link MAX_MESSAGE_BYTES} is refused as soon as its length prefix is read (grpc-go's
 * check), but answered only once the client has finished sending, the rest of the body being read and
 * dropped: a client still writing when the answer arrives may give up its connection (Node's client
 * then refuses every later stream with ENHANCE_YOUR_CALM). GRPC_REQUEST_READ_TIMEOUT ends a body that
 * never ends.
 */
export function serveUnary(
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  method: UnaryMethod,
  onDone: CallDone,
): void {
  const startedMs = performance.now();
  const timeoutMs = grpcTimeoutMs(headers["grpc-timeout"] as string | undefined);
  const chunks: Buffer[] = [];
  let received = 0;
  let declared = -1;
  let tooLarge: string | undefined;
  stream.on("data", (chunk: Buffer) => {
    if (tooLarge !== undefined) return;
    received += chunk.length;
    chunks.push(chunk);
    if (declared < 0 && received >= 5) declared = lengthPrefixOf(chunks);
    if (declared > MAX_MESSAGE_BYTES || received > MAX_MESSAGE_BYTES + 5) {
      tooLarge = `grpc: received message larger than max (${Math.max(declared, received - 5)} vs. ${MAX_MESSAGE_BYTES})`;
      chunks.length = 0;
    }
  });
  stream.on("error", () => {
    // A reset or broken connection: the client is gone, there is nobody to answer.
  });
  stream.on("end", () => {
    // A client that reset the stream or dropped the connection ends it too: nobody to answer.
    if (stream.closed) return;
    if (tooLarge !== undefined) return respondError(stream, Code.ResourceExhausted, tooLarge);
    const frame = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
    const problem = framingProblem(frame);
    if (problem !== undefined) {
      respondError(stream, Code.Internal, problem);
      onDone(method, startedMs, Code.Internal, problem);
      return;
    }
    const finish = (reply: Buffer | undefined, error?: unknown) => {
      if (timeoutMs !== undefined && performance.now() - startedMs > timeoutMs) {
        respondError(stream, Code.DeadlineExceeded, "context deadline exceeded");
        onDone(method, startedMs, Code.DeadlineExceeded, "context deadline exceeded");
      } else if (reply !== undefined) {
        respondFrame(stream, reply);
        onDone(method, startedMs, 0);
      } else {
        const status = grpcStatusOf(error);
        respondError(stream, status.code, status.message);
        onDone(method, startedMs, status.code, status.message, error);
      }
    };
    try {
      const result = method.call(frame.subarray(5));
      if (Buffer.isBuffer(result)) finish(result);
      else
        result.then(
          (reply) => finish(reply),
          (error: unknown) => finish(undefined, error),
        );
    } catch (error) {
      finish(undefined, error);
    }
  });
}

/** The message length declared by the first 5 bytes of the body (flag byte, then uint32 big-endian). */
function lengthPrefixOf(chunks: readonly Buffer[]): number {
  const first = chunks[0]!;
  return (first.length >= 5 ? first : Buffer.concat(chunks)).readUInt32BE(1);
}

/** Why a request body is not exactly one uncompressed length-prefixed message, or undefined. */
function framingProblem(frame: Buffer): string | undefined {
  if (frame.length < 5) return "grpc: request has no complete message";
  const flag = frame[0]!;
  if (flag === 1) return "grpc: compressed flag set without grpc-encoding";
  // The flag byte is 0 or 1 (gRPC over HTTP/2, Length-Prefixed-Message); grpc-go refuses anything else.
  if (flag !== 0) return `grpc: received unexpected payload format ${flag}`;
  const length = frame.readUInt32BE(1);
  if (frame.length < 5 + length) return "grpc: request message is truncated";
  if (frame.length > 5 + length) return "grpc: more than one request message for a unary method";
  return undefined;
}

// Node copies header objects before use, so these are shared by every response.
const OK_HEADERS = Object.freeze({ ":status": 200, "content-type": "application/grpc" });
const OK_TRAILERS = Object.freeze({ "grpc-status": "0" });
// gRPC peers ignore Date; grpc-go sends none.
const RESPOND_OPTIONS = Object.freeze({ waitForTrailers: true, sendDate: false });

function sendOkTrailers(this: ServerHttp2Stream): void {
  this.sendTrailers(OK_TRAILERS);
}

/** Headers, the complete response frame, and `grpc-status: 0` trailers. */
function respondFrame(stream: ServerHttp2Stream, frame: Buffer): void {
  // `closed`: the client reset the stream or left while the call was running (respond() would throw).
  if (stream.closed || stream.headersSent) return;
  stream.respond(OK_HEADERS, RESPOND_OPTIONS);
  stream.once("wantTrailers", sendOkTrailers);
  stream.end(frame);
}

/** A trailers-only response carrying the status. */
export function respondError(stream: ServerHttp2Stream, code: Code, message: string): void {
  if (stream.closed || stream.headersSent) return;
  stream.respond(
    {
      ":status": 200,
      "content-type": "application/grpc",
      "grpc-status": String(code),
      "grpc-message": encodeGrpcMessage(message),
    },
    { endStream: true },
  );
}
