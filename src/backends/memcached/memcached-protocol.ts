/**
 * The few frames of memcached's binary protocol the backend sends, built and parsed with memjs's codec
 * (`Utils.makeRequestBuffer`, `Utils.parseMessage`). Every request carries an `opaque` that its responses
 * echo, so several operations can share one connection.
 */
import { type Response, Utils } from "memjs";

/** Request opcodes (memcached `protocol_binary.h`). */
export const Opcode = {
  increment: 0x05,
  add: 0x02,
  noop: 0x0a,
  version: 0x0b,
  /** Get that answers only hits, with the key (a batch ends with a NOOP). */
  getKQuiet: 0x0d,
} as const;

/** Response statuses the backend tells apart. */
export const Status = {
  ok: 0x0000,
  keyNotFound: 0x0001,
  keyExists: 0x0002,
  notStored: 0x0005,
} as const;

const STATUS_TEXT: Readonly<Record<number, string>> = {
  1: "key not found",
  2: "key exists",
  3: "value too large",
  4: "invalid arguments",
  5: "item not stored",
  6: "incr/decr on a non-numeric value",
  129: "unknown command",
  130: "out of memory",
  131: "not supported",
  132: "internal error",
  133: "busy",
  134: "temporary failure",
};

/** Readable text of a response status, for errors. */
export function statusText(status: number): string {
  return STATUS_TEXT[status] ?? `status 0x${status.toString(16).padStart(4, "0")}`;
}

/** One parsed response: the header fields used here, the key and the value. */
export type MemcachedResponse = Response;

/**
 * The first complete response at the start of `buffer`, or undefined when more bytes are needed. Its key
 * and value are views into `buffer`.
 */
export function parseResponse(buffer: Buffer): MemcachedResponse | undefined {
  // memjs returns `false` (not the typed Response) until a whole frame is there.
  const parsed = Utils.parseMessage(buffer) as Response | false;
  return parsed === false ? undefined : parsed;
}

/** Size of a parsed response on the wire. */
export function frameLength(response: MemcachedResponse): number {
  return 24 + response.header.totalBodyLength;
}

/** Exptime that makes INCREMENT fail with "key not found" instead of creating the key. */
const NO_AUTO_CREATE = 0xffffffff;

/** INCREMENT `key` by `delta` without creating it when absent (gomemcache's `incr`, text protocol). */
export function incrementFrame(key: string, delta: number, opaque: number): Buffer {
  const extras = Buffer.alloc(20);
  extras.writeBigUInt64BE(BigInt(delta), 0);
  extras.writeBigUInt64BE(0n, 8);
  extras.writeUInt32BE(NO_AUTO_CREATE, 16);
  return Utils.makeRequestBuffer(Opcode.increment, key, extras, "", opaque);
}

/** ADD `key` = `value` (flags 0) expiring at `exptime` (memcached's relative-or-absolute seconds). */
export function addFrame(key: string, value: string, exptime: number, opaque: number): Buffer {
  const extras = Buffer.alloc(8);
  extras.writeUInt32BE(0, 0);
  extras.writeUInt32BE(exptime, 4);
  return Utils.makeRequestBuffer(Opcode.add, key, extras, value, opaque);
}

/** One quiet get per key, then a NOOP whose answer marks the end of the hits; all with one opaque. */
export function getMultiFrames(keys: readonly string[], opaque: number): Buffer {
  const frames = keys.map((key) => Utils.makeRequestBuffer(Opcode.getKQuiet, key, "", "", opaque));
  frames.push(Utils.makeRequestBuffer(Opcode.noop, "", "", "", opaque));
  return Buffer.concat(frames);
}

/** VERSION: the cheapest round trip, used to probe a node. */
export function versionFrame(opaque: number): Buffer {
  return Utils.makeRequestBuffer(Opcode.version, "", "", "", opaque);
}
