import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type { Decision, DecisionDescriptor, DecisionRequest } from "../../engine/decision-request.js";
import {
  DEFAULT_REQUEST_LIMITS,
  domainTooLong,
  entryTooLong,
  type RequestLimits,
  tooManyDescriptors,
  tooManyEntries,
} from "../../engine/request-limits.js";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../gen/envoy/service/ratelimit/v3/rls_pb.js";
import { rateLimitResponseFromDecision } from "../rate-limit-response.js";
import { scanRequestLimits } from "./scan-request-limits.js";
import { UNUSUAL, WireReader } from "./wire-reader.js";

/**
 * The hot path's protobuf codec for `ShouldRateLimit`, written against the wire format of
 * envoy.service.ratelimit.v3 (field numbers in `proto/`). It decodes straight into the engine's request
 * shape and encodes a decision straight into a framed gRPC message, skipping protobuf-es's reflection.
 * Anything it does not handle itself — unknown fields, groups, malformed input, dynamic metadata — goes to
 * protobuf-es, so the results and the errors stay exactly protobuf-es's.
 *
 * {@link RequestLimits} are enforced while decoding: a request with too many descriptors or entries, or too
 * long a string, is refused as soon as the excess is read, before the rest becomes objects. Messages left to
 * protobuf-es are scanned for the same limits first.
 */

/** A uint32 field; a longer varint (legal, truncated to 32 bits) is left to protobuf-es. */
const uint32 = (value: number) => {
  if (value > 0xffffffff) throw UNUSUAL;
  return value;
};

function readEntry(
  reader: WireReader,
  end: number,
  limits: RequestLimits,
  descriptor: number,
  index: number,
): { key: string; value: string } {
  let key = "";
  let value = "";
  while (reader.pos < end) {
    const tag = reader.varint();
    if (tag === 0x0a) {
      const text = reader.string(limits.maxEntryBytes);
      if (text === undefined) throw entryTooLong(descriptor, index, "key", limits);
      key = text;
    } else if (tag === 0x12) {
      const text = reader.string(limits.maxEntryBytes);
      if (text === undefined) throw entryTooLong(descriptor, index, "value", limits);
      value = text;
    } else throw UNUSUAL;
  }
  return { key, value };
}

function readOverride(
  reader: WireReader,
  end: number,
  into: { requestsPerUnit: number; unit: number },
): void {
  while (reader.pos < end) {
    const tag = reader.varint();
    if (tag === 0x08) into.requestsPerUnit = uint32(reader.varint());
    else if (tag === 0x10) {
      const unit = reader.varint();
      // enum is int32: a negative value is a 10-byte varint, left to protobuf-es.
      if (unit > 0x7fffffff) throw UNUSUAL;
      into.unit = unit;
    } else throw UNUSUAL;
  }
}

function readDescriptor(
  reader: WireReader,
  end: number,
  limits: RequestLimits,
  index: number,
): DecisionDescriptor {
  const entries: { key: string; value: string }[] = [];
  let limit: { requestsPerUnit: number; unit: number } | undefined;
  let hitsAddend: number | undefined;
  while (reader.pos < end) {
    const tag = reader.varint();
    if (tag === 0x0a) {
      if (entries.length === limits.maxEntries) throw tooManyEntries(index, limits);
      const entryEnd = reader.length();
      entries.push(readEntry(reader, entryEnd, limits, index, entries.length));
    } else if (tag === 0x12) {
      const limitEnd = reader.length();
      limit ??= { requestsPerUnit: 0, unit: 0 };
      readOverride(reader, limitEnd, limit);
    } else if (tag === 0x1a) {
      const wrapperEnd = reader.length();
      hitsAddend ??= 0;
      while (reader.pos < wrapperEnd) {
        if (reader.varint() !== 0x08) throw UNUSUAL;
        hitsAddend = reader.varint();
      }
    } else throw UNUSUAL;
  }
  return { entries, limit, hitsAddend };
}

function decodeFast(buf: Buffer, start: number, end: number, limits: RequestLimits): DecisionRequest {
  const reader = new WireReader(buf, start, end);
  let domain = "";
  const descriptors: DecisionDescriptor[] = [];
  let hitsAddend = 0;
  while (reader.pos < end) {
    const tag = reader.varint();
    if (tag === 0x0a) {
      const text = reader.string(limits.maxEntryBytes);
      if (text === undefined) throw domainTooLong(limits);
      domain = text;
    } else if (tag === 0x12) {
      if (descriptors.length === limits.maxDescriptors) throw tooManyDescriptors(limits);
      const descriptorEnd = reader.length();
      descriptors.push(readDescriptor(reader, descriptorEnd, limits, descriptors.length));
    } else if (tag === 0x18) hitsAddend = uint32(reader.varint());
    else throw UNUSUAL;
  }
  return { domain, descriptors, hitsAddend };
}

/**
 * Decodes a `RateLimitRequest` into the engine's request shape. Throws protobuf-es's error for input that
 * is not a valid message, and an `InvalidArgumentError` for one beyond `limits`.
 */
export function decodeRateLimitRequest(
  bytes: Uint8Array,
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
): DecisionRequest {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  try {
    return decodeFast(buf, 0, buf.length, limits);
  } catch (error) {
    if (error !== UNUSUAL) throw error;
    scanRequestLimits(buf, limits);
    return fromBinary(RateLimitRequestSchema, bytes);
  }
}

const varintSize = (value: number) =>
  value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;

/** Writes a varint below 2^35 (every value this codec writes is a uint32 or a seconds count). */
function writeVarint(buf: Buffer, pos: number, value: number): number {
  let v = value;
  while (v >= 0x80) {
    buf[pos++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  buf[pos++] = v;
  return pos;
}

function writeString(buf: Buffer, pos: number, tag: number, text: string, bytes: number): number {
  buf[pos++] = tag;
  pos = writeVarint(buf, pos, bytes);
  return pos + buf.write(text, pos, bytes, "utf8");
}

/**
 * Encodes a decision as a complete gRPC message frame: the 5-byte prefix and the `RateLimitResponse`.
 * Responses carrying dynamic metadata are encoded by protobuf-es.
 */
export function encodeRateLimitResponseFrame(decision: Decision): Buffer {
  if (decision.dynamicMetadata !== undefined) {
    return frameOf(toBinary(RateLimitResponseSchema, rateLimitResponseFromDecision(decision)));
  }
  const { statuses, responseHeaders } = decision;
  // Sizes first, so the frame is allocated once and written front to back.
  const statusSizes = new Array<number>(statuses.length);
  const limitSizes = new Array<number>(statuses.length);
  const nameBytes = new Array<number>(statuses.length);
  let size = decision.overallCode ? 1 + varintSize(decision.overallCode) : 0;
  for (let i = 0; i < statuses.length; i++) {
    const status = statuses[i]!;
    let statusSize = status.code ? 1 + varintSize(status.code) : 0;
    const limit = status.currentLimit;
    if (limit !== undefined) {
      const name = limit.name === "" ? 0 : Buffer.byteLength(limit.name);
      nameBytes[i] = name;
      let limitSize = name ? 1 + varintSize(name) + name : 0;
      if (limit.requestsPerUnit) limitSize += 1 + varintSize(limit.requestsPerUnit);
      if (limit.unit) limitSize += 1 + varintSize(limit.unit);
      const multiplier = limit.unitMultiplier ?? 1;
      if (multiplier > 1) limitSize += 1 + varintSize(multiplier);
      limitSizes[i] = limitSize;
      statusSize += 1 + varintSize(limitSize) + limitSize;
    }
    if (status.limitRemaining) statusSize += 1 + varintSize(status.limitRemaining);
    const seconds = status.durationUntilResetSeconds;
    if (seconds > 0) statusSize += 1 + 1 + 1 + varintSize(seconds);
    statusSizes[i] = statusSize;
    size += 1 + varintSize(statusSize) + statusSize;
  }
  const headerBytes = responseHeaders.map(
    (h) => [Buffer.byteLength(h.key), Buffer.byteLength(h.value)] as const,
  );
  for (const [key, value] of headerBytes) {
    const headerSize = (key ? 1 + varintSize(key) + key : 0) + (value ? 1 + varintSize(value) + value : 0);
    size += 1 + varintSize(headerSize) + headerSize;
  }

  const buf = Buffer.allocUnsafe(5 + size);
  buf[0] = 0;
  buf.writeUInt32BE(size, 1);
  let pos = 5;
  if (decision.overallCode) {
    buf[pos++] = 0x08;
    pos = writeVarint(buf, pos, decision.overallCode);
  }
  for (let i = 0; i < statuses.length; i++) {
    const status = statuses[i]!;
    buf[pos++] = 0x12;
    pos = writeVarint(buf, pos, statusSizes[i]!);
    if (status.code) {
      buf[pos++] = 0x08;
      pos = writeVarint(buf, pos, status.code);
    }
    const limit = status.currentLimit;
    if (limit !== undefined) {
      buf[pos++] = 0x12;
      pos = writeVarint(buf, pos, limitSizes[i]!);
      if (limit.requestsPerUnit) {
        buf[pos++] = 0x08;
        pos = writeVarint(buf, pos, limit.requestsPerUnit);
      }
      if (limit.unit) {
        buf[pos++] = 0x10;
        pos = writeVarint(buf, pos, limit.unit);
      }
      if (nameBytes[i]) pos = writeString(buf, pos, 0x1a, limit.name, nameBytes[i]!);
      const multiplier = limit.unitMultiplier ?? 1;
      if (multiplier > 1) {
        // Field 4, unit_multiplier (README "Beyond the reference").
        buf[pos++] = 0x20;
        pos = writeVarint(buf, pos, multiplier);
      }
    }
    if (status.limitRemaining) {
      buf[pos++] = 0x18;
      pos = writeVarint(buf, pos, status.limitRemaining);
    }
    const seconds = status.durationUntilResetSeconds;
    if (seconds > 0) {
      buf[pos++] = 0x22;
      buf[pos++] = 1 + varintSize(seconds);
      buf[pos++] = 0x08;
      pos = writeVarint(buf, pos, seconds);
    }
  }
  for (let i = 0; i < responseHeaders.length; i++) {
    const header = responseHeaders[i]!;
    const [key, value] = headerBytes[i]!;
    buf[pos++] = 0x1a;
    pos = writeVarint(
      buf,
      pos,
      (key ? 1 + varintSize(key) + key : 0) + (value ? 1 + varintSize(value) + value : 0),
    );
    if (key) pos = writeString(buf, pos, 0x0a, header.key, key);
    if (value) pos = writeString(buf, pos, 0x12, header.value, value);
  }
  return buf;
}

/** The 5-byte gRPC prefix (uncompressed) followed by `message`. */
export function frameOf(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}
