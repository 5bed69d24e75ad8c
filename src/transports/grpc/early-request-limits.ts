import { promisify } from "node:util";
import { brotliDecompress, gunzip, type InputType, type ZlibOptions } from "node:zlib";
import type { JsonValue } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextKey,
  createContextValues,
} from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import type { RequestLimits } from "../../engine/request-limits.js";
import { InvalidArgumentError } from "../../errors.js";
import { countBeyondLimits } from "../json-request-limits.js";
import { MAX_MESSAGE_BYTES } from "../message-limits.js";
import { scanRequestLimits } from "./scan-request-limits.js";

/**
 * Why a call was refused from its bytes, before connect-node decoded it: set in the call's context values
 * by {@link withEarlyRequestLimits}, thrown by the method's implementation (so that the refusal goes
 * through the interceptor, metrics and error mapping like any other).
 */
export const EARLY_REFUSAL = createContextKey<Error | undefined>(undefined, {
  description: "request refused before decoding",
});

type Decompress = (input: InputType, options: ZlibOptions) => Promise<Buffer>;
const DECOMPRESS: Record<string, Decompress> = {
  gzip: promisify(gunzip) as Decompress,
  br: promisify(brotliDecompress) as Decompress,
};

/** How a request body carries its one message: gRPC's 5-byte envelope, or the whole body (Connect unary). */
interface Framing {
  readonly enveloped: boolean;
  readonly json: boolean;
  /** The header naming the compression: `grpc-encoding` (envelopes) or `content-encoding` (Connect). */
  readonly encodingHeader: string;
}

function framingOf(request: UniversalServerRequest): Framing | undefined {
  if (request.method !== "POST") return undefined;
  const type = (request.header.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (/^application\/grpc(-web)?(\+(proto|json))?$/.test(type)) {
    return { enveloped: true, json: type.endsWith("+json"), encodingHeader: "grpc-encoding" };
  }
  if (type === "application/proto" || type === "application/json") {
    return { enveloped: false, json: type === "application/json", encodingHeader: "content-encoding" };
  }
  return undefined;
}

/** The body read to its end, keeping at most `keepBytes` (the rest is read and dropped). */
async function readBounded(body: AsyncIterable<Uint8Array>, keepBytes: number) {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total <= keepBytes) chunks.push(chunk);
    else chunks.length = 0;
  }
  return { bytes: total <= keepBytes ? Buffer.concat(chunks, total) : undefined, total };
}

async function* replay(...chunks: Uint8Array[]): AsyncIterable<Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

/** `grpc: received message larger than max (N vs. 4194304)`, as the gRPC fast path and grpc-go. */
function tooLarge(size: number): ConnectError {
  return new ConnectError(
    `grpc: received message larger than max (${size} vs. ${MAX_MESSAGE_BYTES})`,
    Code.ResourceExhausted,
  );
}

/**
 * Holds connect-node's calls of one method (gRPC with compression, gRPC-Web, Connect binary and JSON, on
 * HTTP/2 and HTTP/1.1) to the early limits of the gRPC fast path, before protobuf-es decodes the whole
 * message (docs/production.md "Hostile clients"): a message over {@link MAX_MESSAGE_BYTES}, declared or
 * sent, or decompressing to more, is RESOURCE_EXHAUSTED; `check` (descriptor and entry counts, entry sizes)
 * runs on the bytes or the parsed JSON. A refused call reaches the implementation with an empty message
 * and its reason under {@link EARLY_REFUSAL}. Anything the checks cannot follow (unknown compression,
 * malformed framing or JSON) is handed to connect-node unchanged, for its own errors.
 */
export function withEarlyRequestLimits(handler: UniversalHandler, limits: RequestLimits): UniversalHandler {
  const guarded = async (request: UniversalServerRequest) => {
    const framing = framingOf(request);
    const { body } = request;
    if (framing === undefined || !isByteStream(body)) return handler(request);
    let read: { bytes: Buffer | undefined; total: number };
    try {
      read = await readBounded(body, MAX_MESSAGE_BYTES + (framing.enveloped ? 5 : 0));
    } catch (error) {
      // The client went away or reset the stream: connect-node sees the same failure.
      return handler({ ...request, body: failing(error) });
    }
    const refusal = await refusalOf(read, framing, request.header.get(framing.encodingHeader), limits);
    if (refusal === undefined) {
      return handler({ ...request, body: replay(...(read.bytes === undefined ? [] : [read.bytes])) });
    }
    const values: ContextValues = request.contextValues ?? createContextValues();
    values.set(EARLY_REFUSAL, refusal);
    const header = new Headers(request.header);
    header.delete("content-length");
    header.delete("content-encoding");
    const empty = Buffer.from(framing.json ? "{}" : "");
    const placeholder = framing.enveloped ? envelope(empty) : empty;
    return handler({ ...request, header, body: replay(placeholder), contextValues: values });
  };
  return Object.assign(guarded, handler);
}

function isByteStream(body: unknown): body is AsyncIterable<Uint8Array> {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}

// biome-ignore lint/correctness/useYield: a body whose reading failed fails again for connect-node.
async function* failing(error: unknown): AsyncIterable<Uint8Array> {
  throw error;
}

function envelope(message: Buffer): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** Why the call is refused, or undefined to hand it to connect-node. */
async function refusalOf(
  read: { bytes: Buffer | undefined; total: number },
  framing: Framing,
  encoding: string | null,
  limits: RequestLimits,
): Promise<Error | undefined> {
  const { bytes, total } = read;
  let message: Buffer;
  let compressed: boolean;
  if (framing.enveloped) {
    const declared = total >= 5 && bytes !== undefined ? bytes.readUInt32BE(1) : -1;
    if (declared > MAX_MESSAGE_BYTES || bytes === undefined) return tooLarge(Math.max(declared, total - 5));
    if (total < 5 || total < 5 + declared || (bytes[0]! & ~1) !== 0) return undefined;
    message = bytes.subarray(5, 5 + declared);
    compressed = bytes[0] === 1;
  } else {
    if (bytes === undefined) return tooLarge(total);
    message = bytes;
    compressed = encoding !== null && encoding !== "identity";
  }
  if (compressed) {
    const decompress = DECOMPRESS[encoding ?? ""];
    if (decompress === undefined) return undefined;
    try {
      message = await decompress(message, { maxOutputLength: MAX_MESSAGE_BYTES });
    } catch (error) {
      if ((error as { code?: unknown }).code !== "ERR_BUFFER_TOO_LARGE") return undefined;
      return new ConnectError(
        `grpc: received message after decompression larger than max ${MAX_MESSAGE_BYTES}`,
        Code.ResourceExhausted,
      );
    }
  }
  try {
    if (!framing.json) scanRequestLimits(message, limits);
    else {
      const json = parsedOrUndefined(message);
      return json === undefined ? undefined : countBeyondLimits(json, limits);
    }
  } catch (error) {
    if (error instanceof InvalidArgumentError) return error;
    throw error;
  }
  return undefined;
}

function parsedOrUndefined(bytes: Buffer): JsonValue | undefined {
  try {
    return JSON.parse(bytes.toString("utf8")) as JsonValue;
  } catch {
    return undefined;
  }
}
