/**
 * Requests holding sliding-window or token-bucket operations on a single Redis or a sentinel group's
 * primary: their commands as RESP text, and their replies turned into the store's flat values. A request
 * of fixed windows only never comes here; it keeps encodeIncrements and the integer fast path.
 */
import type {
  BucketOperation,
  CounterOperation,
  SlidingOperation,
} from "../../engine/algorithms/counter-operation.js";
import { DetailedFailure, replyReason } from "../client-reason.js";
import { encodeCommand } from "./resp-commands.js";
import { RespError, type RespReply } from "./resp-reply-reader.js";
import {
  parseTokenBucketReply,
  TOKEN_BUCKET_SCRIPT,
  TOKEN_BUCKET_SCRIPT_SHA1,
  tokenBucketScriptArgs,
} from "./token-bucket-script.js";

/** Commands ready for one socket write, and how many replies they produce. */
export interface EncodedOperations {
  readonly commands: string;
  readonly replies: number;
}

/**
 * Counting: fixed → INCRBY + EXPIRE; sliding → INCRBY + EXPIRE + GET previousKey; bucket → EVALSHA.
 * Reading (`reading`): fixed → GET; sliding → GET key + GET previousKey; bucket → EVALSHA with 0 hits.
 */
export function encodeOperations(
  operations: readonly CounterOperation[],
  reading: boolean,
): EncodedOperations {
  let commands = "";
  let replies = 0;
  for (const operation of operations) {
    switch (operation.kind) {
      case undefined:
      case "fixed":
        commands += reading
          ? get(operation.key)
          : incrementAndExpire(operation.key, operation.hits, operation.ttlSeconds);
        replies += reading ? 1 : 2;
        break;
      case "sliding":
        if (!reading) commands += incrementAndExpire(operation.key, operation.hits, operation.ttlSeconds);
        else commands += get(operation.key);
        commands += get(operation.previousKey);
        replies += reading ? 2 : 3;
        break;
      case "bucket":
        commands += encodeCommand(["EVALSHA", TOKEN_BUCKET_SCRIPT_SHA1, ...bucketArgs(operation, reading)]);
        replies += 1;
        break;
    }
  }
  return { commands, replies };
}

/**
 * `DECRBY key hits` + `EXPIRE key ttlSeconds` per refused sliding-window request: two replies each. The
 * EXPIRE matters only when the counter vanished since it was counted (evicted, flushed): DECRBY then
 * creates it at -hits, and without a TTL it would stay forever. Otherwise it renews the TTL the
 * increment set a round trip earlier.
 */
export function encodeReleases(operations: readonly SlidingOperation[]): string {
  let commands = "";
  for (const { key, hits, ttlSeconds } of operations) {
    commands +=
      encodeCommand(["DECRBY", key, String(hits)]) + encodeCommand(["EXPIRE", key, String(ttlSeconds)]);
  }
  return commands;
}

/** The script sent in full (`EVAL`) for each of `operations`, after their EVALSHA answered NOSCRIPT. */
export function encodeScriptRetries(
  operations: readonly CounterOperation[],
  indexes: readonly number[],
  reading: boolean,
): string {
  let commands = "";
  for (const index of indexes) {
    const operation = operations[index]!;
    if (operation.kind !== "bucket") continue;
    commands += encodeCommand(["EVAL", TOKEN_BUCKET_SCRIPT, ...bucketArgs(operation, reading)]);
  }
  return commands;
}

/** What the replies gave: the flat values, and the bucket operations whose script Redis did not know. */
export interface OperationValues {
  readonly values: number[];
  /** Indexes (into the operations) of bucket operations answered NOSCRIPT; their values are placeholders. */
  readonly unknownScript: number[];
  /** Where each operation's values start in `values`. */
  readonly offsets: number[];
}

/**
 * Turns the replies of {@link encodeOperations} into values, `resultCountOf` per operation, in order.
 * The first error reply (other than a bucket's NOSCRIPT) or a reply that is no counter fails the whole
 * request, as the fixed path does.
 */
export function valuesOfReplies(
  operations: readonly CounterOperation[],
  replies: readonly RespReply[],
  reading: boolean,
): OperationValues {
  const failure = replies.find((reply) => reply instanceof RespError && !isScriptMiss(reply));
  if (failure instanceof RespError) throw new DetailedFailure(failure.message, replyReason(failure.message));
  const values: number[] = [];
  const unknownScript: number[] = [];
  const offsets: number[] = [];
  let next = 0;
  operations.forEach((operation, index) => {
    offsets.push(values.length);
    switch (operation.kind) {
      case undefined:
      case "fixed":
        values.push(counterOf(replies[next]));
        next += reading ? 1 : 2;
        break;
      case "sliding":
        if (reading) values.push(counterOf(replies[next]), counterOf(replies[next + 1]));
        else values.push(counterOf(replies[next]), counterOf(replies[next + 2]));
        next += reading ? 2 : 3;
        break;
      case "bucket": {
        const reply = replies[next++];
        if (reply instanceof RespError) {
          unknownScript.push(index);
          values.push(0, 0);
        } else values.push(...bucketValues(reply, reading));
        break;
      }
    }
  });
  return { values, unknownScript, offsets };
}

/** Fills in the values of the retried bucket operations from the replies of {@link encodeScriptRetries}. */
export function fillScriptRetries(
  result: OperationValues,
  replies: readonly RespReply[],
  reading: boolean,
): void {
  result.unknownScript.forEach((index, n) => {
    const reply = replies[n];
    if (reply instanceof RespError) throw new DetailedFailure(reply.message, replyReason(reply.message));
    const [allowed, debtUs] = bucketValues(reply, reading);
    const at = result.offsets[index]!;
    result.values[at] = allowed;
    result.values[at + 1] = debtUs;
  });
}

/** `[allowed, debtUs]`; a read answers `[1, debtUs]` (nothing was taken). */
function bucketValues(reply: RespReply | undefined, reading: boolean): [number, number] {
  const { allowed, debtUs } = parseTokenBucketReply(reply);
  return [reading ? 1 : allowed, debtUs];
}

/** Only EVALSHA answers NOSCRIPT: the script cache was flushed, or this server never saw the script. */
function isScriptMiss(reply: RespError): boolean {
  return reply.message.startsWith("NOSCRIPT");
}

/** An INCRBY's integer, or a GET's text (absent = 0). */
function counterOf(reply: RespReply | undefined): number {
  const value = typeof reply === "number" ? reply : reply === null ? 0 : Number(reply);
  if (typeof reply === "object" && reply !== null) throw unexpected(reply);
  if (Number.isNaN(value)) throw unexpected(reply);
  return value;
}

function unexpected(reply: RespReply | undefined): DetailedFailure {
  return new DetailedFailure(
    `unexpected reply ${JSON.stringify(reply)} for a counter`,
    "unexpected reply for a counter",
  );
}

function bucketArgs(operation: BucketOperation, reading: boolean): string[] {
  return tokenBucketScriptArgs(operation, reading ? 0 : operation.hits);
}

function get(key: string): string {
  return encodeCommand(["GET", key]);
}

function incrementAndExpire(key: string, hits: number, ttlSeconds: number): string {
  return encodeCommand(["INCRBY", key, String(hits)]) + encodeCommand(["EXPIRE", key, String(ttlSeconds)]);
}
