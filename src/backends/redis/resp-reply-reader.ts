/**
 * Redis replies (RESP2) read straight from socket chunks: integers, simple and bulk strings, nulls, errors
 * and arrays. Integer replies, the only kind on the hot path (INCRBY, EXPIRE), are parsed from the bytes
 * without making a string.
 */

/** An error reply (`-ERR …`); `message` is its text without the leading `-`. */
export class RespError {
  constructor(readonly message: string) {}
}

export type RespReply = number | string | null | RespError | RespReply[];

const CR = 13;
const PLUS = 43;
const MINUS = 45;
const COLON = 58;
const DOLLAR = 36;
const STAR = 42;
const ZERO = 48;

/** Returned by the parse step while the reply is not complete yet. */
const INCOMPLETE = -1;

/** Thrown for bytes that are not RESP: the connection cannot be trusted any more. */
export class RespProtocolError extends Error {
  override name = "RespProtocolError";
}

/**
 * Feeds chunks in, calls `onReply` once per complete top-level reply, in order. Keeps an incomplete tail
 * until the next chunk.
 */
export class RespReplyReader {
  #tail: Buffer | undefined;
  #reply: RespReply = null;

  /**
   * `onInteger`, when given, takes the top-level integer replies (the hot path's INCRBY and EXPIRE) as
   * plain numbers, ahead of the general parse; `onReply` takes every other reply.
   */
  constructor(
    private readonly onReply: (reply: RespReply) => void,
    private readonly onInteger: (value: number) => void = onReply,
  ) {}

  /** Parses what `chunk` completes; throws `RespProtocolError` on bytes that are not RESP. */
  feed(chunk: Buffer): void {
    let data = chunk;
    if (this.#tail !== undefined) {
      data = Buffer.concat([this.#tail, chunk]);
      this.#tail = undefined;
    }
    let offset = 0;
    while (offset < data.length) {
      if (data[offset] === COLON) {
        const next = this.#integer(data, offset + 1);
        if (next === INCOMPLETE) break;
        offset = next;
        this.onInteger(this.#reply as number);
        continue;
      }
      const next = this.#parse(data, offset);
      if (next === INCOMPLETE) break;
      offset = next;
      this.onReply(this.#reply);
    }
    // Copied: the chunk's memory belongs to the socket's pool.
    if (offset < data.length) this.#tail = Buffer.from(data.subarray(offset));
  }

  /** Drops a partial reply (after the connection was lost). */
  reset(): void {
    this.#tail = undefined;
  }

  /** Parses one reply at `offset` into `#reply`; returns the offset after it, or INCOMPLETE. */
  #parse(data: Buffer, offset: number): number {
    const type = data[offset]!;
    if (type === COLON) return this.#integer(data, offset + 1);
    const lineEnd = data.indexOf(CR, offset + 1);
    if (lineEnd < 0 || lineEnd + 1 >= data.length) return INCOMPLETE;
    const after = lineEnd + 2;
    switch (type) {
      case PLUS:
        this.#reply = data.toString("utf8", offset + 1, lineEnd);
        return after;
      case MINUS:
        this.#reply = new RespError(data.toString("utf8", offset + 1, lineEnd));
        return after;
      case DOLLAR: {
        const size = Number(data.toString("latin1", offset + 1, lineEnd));
        if (size < 0) {
          this.#reply = null;
          return after;
        }
        if (after + size + 2 > data.length) return INCOMPLETE;
        this.#reply = data.toString("utf8", after, after + size);
        return after + size + 2;
      }
      case STAR:
        return this.#array(data, after, Number(data.toString("latin1", offset + 1, lineEnd)));
      default:
        throw new RespProtocolError(`unexpected reply type byte ${type} from Redis`);
    }
  }

  #integer(data: Buffer, start: number): number {
    let i = start;
    let negative = false;
    if (data[i] === MINUS) {
      negative = true;
      i++;
    }
    let value = 0;
    for (; i < data.length; i++) {
      const byte = data[i]!;
      if (byte === CR) {
        if (i + 1 >= data.length) return INCOMPLETE;
        this.#reply = negative ? -value : value;
        return i + 2;
      }
      const digit = byte - ZERO;
      if (digit < 0 || digit > 9) throw new RespProtocolError("malformed integer reply from Redis");
      value = value * 10 + digit;
    }
    return INCOMPLETE;
  }

  #array(data: Buffer, start: number, count: number): number {
    if (count < 0) {
      this.#reply = null;
      return start;
    }
    const items: RespReply[] = [];
    let offset = start;
    for (let n = 0; n < count; n++) {
      if (offset >= data.length) return INCOMPLETE;
      offset = this.#parse(data, offset);
      if (offset === INCOMPLETE) return INCOMPLETE;
      items.push(this.#reply);
    }
    this.#reply = items;
    return offset;
  }
}
