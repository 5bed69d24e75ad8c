/**
 * Requests holding sliding-window or token-bucket operations on a single Redis or a sentinel group's
 * primary: their commands (operation-shapes.ts) as RESP text, and their replies turned into the store's
 * flat values. A request of fixed windows only never comes here; it keeps encodeIncrements and the
 * integer fast path.
 */
import type {
  BucketOperation,
  CounterOperation,
  SlidingOperation,
} from "../../engine/algorithms/counter-operation.js";
import { DetailedFailure, replyReason } from "../client-reason.js";
import { operationCommandsOf } from "./operation-shapes.js";
import {
  parseReservationReply,
  RESERVATION_SCRIPT,
  RESERVATION_SCRIPT_SHA1,
  reservationScriptArgs,
} from "./reservation-script.js";
import { encodeCommand } from "./resp-commands.js";
import { RespError, type RespReply } from "./resp-reply-reader.js";
import {
  parseTokenBucketReplies,
  TOKEN_BUCKET_SCRIPT,
  TOKEN_BUCKET_SCRIPT_SHA1,
  tokenBucketsScriptArgs,
} from "./token-bucket-script.js";

/** Commands ready for one socket write, and how many replies they produce. */
export interface EncodedOperations {
  readonly commands: string;
  readonly replies: number;
}

/**
 * Each operation's commands when counting, or with `reading` when reading (`operationCommandsOf`), in
 * order; every bucket together → one EVALSHA, after the rest (with 0 hits when reading).
 */
export function encodeOperations(
  operations: readonly CounterOperation[],
  reading: boolean,
): EncodedOperations {
  let commands = "";
  let replies = 0;
  const buckets: BucketOperation[] = [];
  for (const operation of operations) {
    const shape = operationCommandsOf(operation, reading);
    for (const command of shape.commands) commands += encodeCommand(command);
    replies += shape.commands.length;
    if (shape.bucket !== undefined) buckets.push(shape.bucket);
  }
  if (buckets.length > 0) {
    // Every bucket of the request in one script call, last: Redis pays the call and TIME once.
    commands += encodeCommand(["EVALSHA", TOKEN_BUCKET_SCRIPT_SHA1, ...bucketsArgs(buckets, reading)]);
    replies += 1;
  }
  // Then each reservation step, a call of its own, in order.
  for (const operation of operations) {
    if (operation.kind !== "reserve") continue;
    commands += encodeCommand([
      "EVALSHA",
      RESERVATION_SCRIPT_SHA1,
      ...reservationScriptArgs(operation, reading),
    ]);
    replies += 1;
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

/**
 * The script sent in full (`EVAL`) for the bucket operations at `indexes`, after their EVALSHA answered
 * NOSCRIPT: one call, one reply.
 */
export function encodeScriptRetries(
  operations: readonly CounterOperation[],
  indexes: readonly number[],
  reading: boolean,
): EncodedOperations {
  const buckets = indexes.map((index) => operations[index]!).filter(isBucket);
  let commands =
    buckets.length > 0 ? encodeCommand(["EVAL", TOKEN_BUCKET_SCRIPT, ...bucketsArgs(buckets, reading)]) : "";
  let replies = buckets.length > 0 ? 1 : 0;
  for (const index of indexes) {
    const operation = operations[index]!;
    if (operation.kind !== "reserve") continue;
    commands += encodeCommand(["EVAL", RESERVATION_SCRIPT, ...reservationScriptArgs(operation, reading)]);
    replies += 1;
  }
  return { commands, replies };
}

/** What the replies gave: the flat values, and the bucket operations whose script Redis did not know. */
export interface OperationValues {
  readonly values: number[];
  /**
   * Indexes (into the operations) of bucket and reservation operations answered NOSCRIPT; their values are
   * placeholders.
   */
  readonly unknownScript: number[];
  /** Those of {@link unknownScript} that are reservation steps. */
  readonly unknownReserves?: number[];
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
  const offsets: number[] = [];
  const buckets: number[] = [];
  const reserves: number[] = [];
  let next = 0;
  operations.forEach((operation, index) => {
    offsets.push(values.length);
    const shape = operationCommandsOf(operation, reading);
    for (const reply of shape.replyOf) values.push(counterOf(replies[next + reply]));
    next += shape.commands.length;
    if (shape.bucket !== undefined) {
      // Filled from the one script call that follows the other commands.
      buckets.push(index);
      values.push(0, 0);
    }
    if (shape.reserve !== undefined) {
      // Filled from its own script call, after the buckets' one.
      reserves.push(index);
      values.push(0, 0, 0, 0, 0, 0);
    }
  });
  const unknownScript: number[] = [];
  if (buckets.length > 0) {
    const reply = replies[next++];
    if (reply instanceof RespError) unknownScript.push(...buckets);
    else fillBuckets({ values, offsets }, buckets, reply, reading);
  }
  const unknownReserves: number[] = [];
  for (const index of reserves) {
    const reply = replies[next++];
    if (reply instanceof RespError) unknownReserves.push(index);
    else fillReserve({ values, offsets }, index, reply);
  }
  if (unknownReserves.length === 0) return { values, unknownScript, offsets };
  return { values, unknownScript: [...unknownScript, ...unknownReserves], unknownReserves, offsets };
}

/** Fills in the values of the retried bucket operations from the replies of {@link encodeScriptRetries}. */
export function fillScriptRetries(
  result: OperationValues,
  replies: readonly RespReply[],
  reading: boolean,
): void {
  const reserves = result.unknownReserves ?? [];
  const buckets = result.unknownScript.filter((index) => !reserves.includes(index));
  let next = 0;
  const take = (): RespReply | undefined => {
    const reply = replies[next++];
    if (reply instanceof RespError) throw new DetailedFailure(reply.message, replyReason(reply.message));
    return reply;
  };
  if (buckets.length > 0) fillBuckets(result, buckets, take(), reading);
  for (const index of reserves) fillReserve(result, index, take());
}

/** A reservation step's six values from its script's reply. */
function fillReserve(
  result: Pick<OperationValues, "values" | "offsets">,
  index: number,
  reply: RespReply | undefined,
): void {
  const at = result.offsets[index]!;
  parseReservationReply(reply).forEach((value, n) => {
    result.values[at + n] = value;
  });
}

/** Each bucket's `[allowed, debtUs]` from the script's reply; a read answers `[1, debtUs]` (nothing taken). */
function fillBuckets(
  result: Pick<OperationValues, "values" | "offsets">,
  indexes: readonly number[],
  reply: RespReply | undefined,
  reading: boolean,
): void {
  parseTokenBucketReplies(reply, indexes.length).forEach(({ allowed, debtUs }, n) => {
    const at = result.offsets[indexes[n]!]!;
    result.values[at] = reading ? 1 : allowed;
    result.values[at + 1] = debtUs;
  });
}

function isBucket(operation: CounterOperation): operation is BucketOperation {
  return operation.kind === "bucket";
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

function bucketsArgs(operations: readonly BucketOperation[], reading: boolean): string[] {
  return tokenBucketsScriptArgs(operations, (operation) => (reading ? 0 : operation.hits));
}
