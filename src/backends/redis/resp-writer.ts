/**
 * The bytes a connection sends: commands written straight into one slab of memory, each batch (one event-loop
 * turn's commands) handed to the socket as a view of the slab. The hot path's INCRBY + EXPIRE pairs and GETs
 * are written key by key, with no string built per command; other commands arrive as RESP text
 * (resp-commands.ts). Bytes handed out are never written over: when the slab is full, a new one is taken
 * and the old one lives on as long as the socket holds a view of it.
 */
import type { FixedOperation } from "../../engine/algorithms/counter-operation.js";
import type { CounterIncrement } from "../../engine/counter-store.js";

const SLAB_BYTES = 64 * 1024;
const INCRBY_HEAD = Buffer.from("*3\r\n$6\r\nINCRBY\r\n");
const EXPIRE_HEAD = Buffer.from("*3\r\n$6\r\nEXPIRE\r\n");
const GET_HEAD = Buffer.from("*2\r\n$3\r\nGET\r\n");
/** `*3\r\n$6\r\nINCRBY\r\n` and `$<len>\r\n…\r\n` around a key and a number, twice, leave this much room. */
const PAIR_OVERHEAD = 2 * (INCRBY_HEAD.length + 2 * (1 + 20 + 2 + 2));
const CR = 13;
const LF = 10;
const DOLLAR = 36;
const ZERO = 48;

export class RespWriter {
  #slab = Buffer.allocUnsafe(SLAB_BYTES);
  /** Where the batch not yet taken starts. */
  #start = 0;
  /** Where the next byte goes. */
  #end = 0;

  /** Whether commands wait to be taken. */
  get pending(): boolean {
    return this.#end > this.#start;
  }

  /** `INCRBY key hits` then `EXPIRE key ttl` for every operation, in order (the reference's commands). */
  increments(operations: readonly FixedOperation[]): void {
    for (let i = 0; i < operations.length; i++) {
      const { key, hits, ttlSeconds } = operations[i]!;
      this.#reserve(PAIR_OVERHEAD + 6 * key.length);
      const slab = this.#slab;
      slab.set(INCRBY_HEAD, this.#end);
      this.#end += INCRBY_HEAD.length;
      const keyAt = this.#key(key);
      const keyEnd = this.#end - 2;
      this.#bulkInteger(hits);
      slab.set(EXPIRE_HEAD, this.#end);
      this.#end += EXPIRE_HEAD.length;
      // The key's `$<len>\r\n<bytes>\r\n` again, copied rather than encoded twice.
      const headerAt = keyAt - 3 - digitsOf(keyEnd - keyAt);
      this.#end += slab.copy(slab, this.#end, headerAt, keyEnd + 2);
      this.#bulkInteger(ttlSeconds);
    }
  }

  /** `GET key` for every increment: one reply each. */
  reads(increments: readonly CounterIncrement[]): void {
    for (let i = 0; i < increments.length; i++) {
      const { key } = increments[i]!;
      this.#reserve(GET_HEAD.length + 25 + 3 * key.length);
      this.#slab.set(GET_HEAD, this.#end);
      this.#end += GET_HEAD.length;
      this.#key(key);
    }
  }

  /** Commands already encoded as RESP text. */
  text(commands: string): void {
    this.#reserve(3 * commands.length);
    this.#end += this.#slab.write(commands, this.#end, "utf8");
  }

  /** The commands written since the last take, as bytes no later write touches; empty when none. */
  take(): Buffer {
    const batch = this.#slab.subarray(this.#start, this.#end);
    this.#start = this.#end;
    return batch;
  }

  /** Forgets what was written and not taken (the connection was lost). */
  clear(): void {
    this.#end = this.#start;
  }

  /** Makes room for `bytes` more; a new slab keeps the untaken batch and leaves the old one to its views. */
  #reserve(bytes: number): void {
    if (this.#end + bytes <= this.#slab.length) return;
    const untaken = this.#end - this.#start;
    const slab = Buffer.allocUnsafe(Math.max(SLAB_BYTES, 2 * (untaken + bytes)));
    this.#slab.copy(slab, 0, this.#start, this.#end);
    this.#slab = slab;
    this.#start = 0;
    this.#end = untaken;
  }

  /**
   * `$<bytes>\r\n<key>\r\n`, the length in UTF-8 bytes. The key is encoded once, straight into place: its
   * header is sized for one byte a character, and moved in the rare case the bytes need more digits.
   * Returns where the key's bytes start.
   */
  #key(key: string): number {
    const slab = this.#slab;
    const guess = digitsOf(key.length);
    let at = this.#end + 3 + guess;
    const bytes = slab.write(key, at, "utf8");
    const digits = digitsOf(bytes);
    if (digits !== guess) {
      slab.copy(slab, at + digits - guess, at, at + bytes);
      at += digits - guess;
    }
    slab[this.#end] = DOLLAR;
    writeDigits(slab, this.#end + 1, bytes, digits);
    slab[at - 2] = CR;
    slab[at - 1] = LF;
    slab[at + bytes] = CR;
    slab[at + bytes + 1] = LF;
    this.#end = at + bytes + 2;
    return at;
  }

  /** `$<digits>\r\n<value>\r\n` for a non-negative integer (hits, a TTL). */
  #bulkInteger(value: number): void {
    const slab = this.#slab;
    const digits = digitsOf(value);
    let at = this.#end;
    slab[at++] = DOLLAR;
    at = writeDigits(slab, at, digits, digitsOf(digits));
    slab[at++] = CR;
    slab[at++] = LF;
    at = writeDigits(slab, at, value, digits);
    slab[at++] = CR;
    slab[at++] = LF;
    this.#end = at;
  }
}

/** Decimal digits of a non-negative integer: comparisons for the usual sizes, division beyond. */
function digitsOf(value: number): number {
  if (value < 10) return 1;
  if (value < 100) return 2;
  if (value < 1000) return 3;
  if (value < 10_000) return 4;
  if (value < 100_000) return 5;
  let digits = 6;
  for (let rest = Math.floor(value / 1_000_000); rest >= 1; rest = Math.floor(rest / 10)) digits++;
  return digits;
}

/** Writes `value`'s `digits` decimal digits at `at`; returns the offset after them. */
function writeDigits(slab: Buffer, at: number, value: number, digits: number): number {
  let rest = value;
  for (let i = at + digits - 1; i >= at; i--) {
    slab[i] = ZERO + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return at + digits;
}
