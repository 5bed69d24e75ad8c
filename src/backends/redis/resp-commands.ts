/**
 * Redis commands written as RESP2 arrays of bulk strings, as text ready for one socket write. Lengths are
 * in bytes (UTF-8), so keys holding any descriptor value are sent intact.
 */
import type { FixedOperation } from "../../engine/algorithms/counter-operation.js";
import type { CounterIncrement } from "../../engine/counter-store.js";

/** One bulk string: `$<bytes>\r\n<text>\r\n`. */
function bulk(text: string): string {
  return `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
}

/** A whole command, e.g. `encodeCommand(["AUTH", "user", "secret"])`. */
export function encodeCommand(args: readonly string[]): string {
  let text = `*${args.length}\r\n`;
  for (const arg of args) text += bulk(arg);
  return text;
}

/**
 * `INCRBY key hits` then `EXPIRE key ttl` for every increment, in order: the reference's commands, two
 * replies per increment.
 */
export function encodeIncrements(increments: readonly FixedOperation[]): string {
  let text = "";
  for (const { key, hits, ttlSeconds } of increments) {
    const k = bulk(key);
    const h = String(hits);
    const ttl = String(ttlSeconds);
    text += `*3\r\n$6\r\nINCRBY\r\n${k}$${h.length}\r\n${h}\r\n*3\r\n$6\r\nEXPIRE\r\n${k}$${ttl.length}\r\n${ttl}\r\n`;
  }
  return text;
}

/** `GET key` for every increment: one reply each. */
export function encodeReads(increments: readonly CounterIncrement[]): string {
  let text = "";
  for (const { key } of increments) text += `*2\r\n$3\r\nGET\r\n${bulk(key)}`;
  return text;
}
