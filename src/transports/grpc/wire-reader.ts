import { isUtf8 } from "node:buffer";

/** Thrown by {@link WireReader} on anything it does not handle: the caller leaves the bytes to protobuf-es. */
export class Unusual extends Error {}
/** The one {@link Unusual} instance (no stack is captured per message). */
export const UNUSUAL = new Unusual();

/**
 * A reader over one protobuf message's bytes for the hand-written codecs. It gives up (throws
 * {@link UNUSUAL}) on anything unexpected — truncation, varints beyond 2^53, invalid UTF-8 — so that
 * protobuf-es decides those, with its own results and errors.
 */
export class WireReader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.end) throw UNUSUAL;
      const byte = this.buf[this.pos++]!;
      if (shift < 28) result |= (byte & 0x7f) << shift;
      else result += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) {
        // Beyond 2^53 a number is no longer exact: protobuf-es decides those.
        if (result > Number.MAX_SAFE_INTEGER) throw UNUSUAL;
        return result;
      }
      shift += 7;
      if (shift > 63) throw UNUSUAL;
    }
  }

  /** A length-delimited field: returns its end offset and leaves `pos` at its start. */
  length(): number {
    const length = this.varint();
    const end = this.pos + length;
    if (end > this.end) throw UNUSUAL;
    return end;
  }

  /** A string field, or undefined (with `pos` after it) when it is longer than `maxBytes`. */
  string(maxBytes = Number.POSITIVE_INFINITY): string | undefined {
    const end = this.length();
    if (end - this.pos > maxBytes) {
      this.pos = end;
      return undefined;
    }
    const text = this.buf.toString("utf8", this.pos, end);
    // Buffer decoding turns invalid UTF-8 into U+FFFD; proto3 strings must be UTF-8 and protobuf-es
    // (like grpc-go) refuses such a message.
    if (text.includes("\uFFFD") && !isUtf8(this.buf.subarray(this.pos, end))) throw UNUSUAL;
    this.pos = end;
    return text;
  }

  /**
   * Skips the value of the field whose tag was just read, groups included (to a nesting depth of 32;
   * deeper ones, and stray end-group tags, are left to protobuf-es).
   */
  skip(tag: number, depth = 0): void {
    const wireType = tag & 7;
    if (wireType === 0) this.varint();
    else if (wireType === 2) this.pos = this.length();
    else if (wireType === 1 || wireType === 5) {
      this.pos += wireType === 1 ? 8 : 4;
      if (this.pos > this.end) throw UNUSUAL;
    } else if (wireType === 3 && depth < 32) {
      for (;;) {
        const inner = this.varint();
        if ((inner & 7) === 4) {
          if (inner >>> 3 !== tag >>> 3) throw UNUSUAL;
          return;
        }
        this.skip(inner, depth + 1);
      }
    } else throw UNUSUAL;
  }
}
