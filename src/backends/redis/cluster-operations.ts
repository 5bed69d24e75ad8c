/**
 * Requests holding sliding-window or token-bucket operations on a Redis Cluster, and the releases of
 * refused sliding-window hits. Every command of an operation (operation-shapes.ts) goes with its own
 * key's hash slot, one pipeline per slot as for fixed windows (cluster-commands.ts): a sliding window's
 * INCRBY + EXPIRE with `key`, its GET with `previousKey`, which may lie elsewhere; a token bucket's
 * EVALSHA with its key.
 */
import calculateSlot from "cluster-key-slot";
import type { ChainableCommander } from "ioredis";
import {
  type BucketOperation,
  type CounterOperation,
  type ReserveOperation,
  resultCountOf,
  type SlidingOperation,
} from "../../engine/algorithms/counter-operation.js";
import { DetailedFailure } from "../client-reason.js";
import {
  type CommandRunOptions,
  clusterFailure,
  forEachBounded,
  requireReady,
  withTimeout,
} from "./cluster-commands.js";
import type { ClusterConnection } from "./cluster-connection.js";
import { operationCommandsOf } from "./operation-shapes.js";
import {
  parseReservationReply,
  RESERVATION_SCRIPT,
  RESERVATION_SCRIPT_SHA1,
  reservationScriptArgs,
} from "./reservation-script.js";
import {
  parseTokenBucketReply,
  TOKEN_BUCKET_SCRIPT,
  TOKEN_BUCKET_SCRIPT_SHA1,
  tokenBucketScriptArgs,
} from "./token-bucket-script.js";

type PipelineResult = [error: Error | null, value: unknown];

/** Commands on one key, and what to do with their replies. */
interface Part {
  readonly key: string;
  /** Queues the commands; returns how many replies they give. */
  readonly append: (pipeline: ChainableCommander) => number;
  /** Takes the replies (none is an error, NOSCRIPT aside for a bucket). */
  readonly take: (results: readonly PipelineResult[]) => void;
}

/**
 * Counts (or, with `reading`, reads) every operation and answers their values as one flat list,
 * `resultCountOf` per operation. A bucket whose EVALSHA answers NOSCRIPT is sent again by EVAL, alone.
 */
export async function applyClusterOperations(
  connection: ClusterConnection,
  operations: readonly CounterOperation[],
  reading: boolean,
  options: CommandRunOptions,
): Promise<number[]> {
  requireReady(connection, options);
  const values: number[] = [];
  const parts: Part[] = [];
  const unknownScript: { operation: BucketOperation; at: number }[] = [];
  const unknownReserves: { operation: ReserveOperation; at: number }[] = [];
  for (const operation of operations) {
    const at = values.length;
    for (let n = resultCountOf(operation); n > 0; n--) values.push(0);
    const { commands, replyOf, bucket, reserve } = operationCommandsOf(operation, reading);
    if (reserve !== undefined) {
      parts.push(
        reservePart(reserve, reading, values, at, () => unknownReserves.push({ operation: reserve, at })),
      );
    }
    commands.forEach((command, index) => {
      parts.push(commandPart(command, replyOf.indexOf(index), values, at));
    });
    if (bucket !== undefined) {
      parts.push(
        bucketPart(bucket, reading, values, at, () => unknownScript.push({ operation: bucket, at })),
      );
    }
  }
  try {
    await runParts(connection, parts, options);
    await Promise.all(
      unknownScript.map(async ({ operation, at }) => {
        const args = tokenBucketScriptArgs(operation, reading ? 0 : operation.hits);
        const reply = await withTimeout(connection.eval(TOKEN_BUCKET_SCRIPT, ...args), options);
        setBucketValues(values, at, reply, reading);
      }),
    );
    await Promise.all(
      unknownReserves.map(async ({ operation, at }) => {
        const args = reservationScriptArgs(operation, reading);
        const reply = await withTimeout(connection.eval(RESERVATION_SCRIPT, ...args), options);
        setReserveValues(values, at, reply);
      }),
    );
  } catch (error) {
    throw clusterFailure(error, options);
  }
  return values;
}

/**
 * `DECRBY key hits` + `EXPIRE key ttlSeconds` for every refused sliding-window request (see
 * `encodeReleases` in resp-operations.ts for the EXPIRE); rejects on the first failure.
 */
export async function releaseClusterHits(
  connection: ClusterConnection,
  operations: readonly SlidingOperation[],
  options: CommandRunOptions,
): Promise<void> {
  requireReady(connection, options);
  const parts = operations.map(
    ({ key, hits, ttlSeconds }): Part => ({
      key,
      append: (pipeline) => {
        pipeline.decrby(key, hits).expire(key, ttlSeconds);
        return 2;
      },
      take: () => {},
    }),
  );
  try {
    await runParts(connection, parts, options);
  } catch (error) {
    throw clusterFailure(error, options);
  }
}

/**
 * One command `[NAME, key, …args]`. Its reply, when it is the operation's value number `valueIndex` (-1:
 * none, as an EXPIRE's), is a counter — an integer, or a GET's text (absent = 0) — put at
 * `values[at + valueIndex]`.
 */
function commandPart(command: readonly string[], valueIndex: number, values: number[], at: number): Part {
  const [name, ...args] = command as [string, ...string[]];
  return {
    key: args[0]!,
    append: (pipeline) => {
      pipeline.call(name, args);
      return 1;
    },
    take: ([first]) => {
      if (valueIndex < 0) return;
      const value = first?.[1];
      const number = value === null || value === undefined ? 0 : Number(value);
      if (Number.isNaN(number) || (typeof value === "object" && value !== null)) {
        throw new DetailedFailure(
          `unexpected reply ${JSON.stringify(value)} for a counter`,
          "unexpected reply for a counter",
        );
      }
      values[at + valueIndex] = number;
    },
  };
}

function bucketPart(
  operation: BucketOperation,
  reading: boolean,
  values: number[],
  at: number,
  unknownScript: () => void,
): Part {
  return {
    key: operation.key,
    append: (pipeline) => {
      const args = tokenBucketScriptArgs(operation, reading ? 0 : operation.hits);
      pipeline.evalsha(TOKEN_BUCKET_SCRIPT_SHA1, ...args);
      return 1;
    },
    take: ([result]) => {
      if (result?.[0]) unknownScript();
      else setBucketValues(values, at, result?.[1], reading);
    },
  };
}

/** A reservation step: its script by EVALSHA on the node of its one key (reservation-script.ts). */
function reservePart(
  operation: ReserveOperation,
  reading: boolean,
  values: number[],
  at: number,
  unknownScript: () => void,
): Part {
  return {
    key: operation.key,
    append: (pipeline) => {
      pipeline.evalsha(RESERVATION_SCRIPT_SHA1, ...reservationScriptArgs(operation, reading));
      return 1;
    },
    take: ([result]) => {
      if (result?.[0]) unknownScript();
      else setReserveValues(values, at, result?.[1]);
    },
  };
}

/** The step's six values at `values[at]`. */
function setReserveValues(values: number[], at: number, reply: unknown): void {
  parseReservationReply(reply).forEach((value, n) => {
    values[at + n] = value;
  });
}

/** `[allowed, debtUs]` at `values[at]`; a read answers `[1, debtUs]`. */
function setBucketValues(values: number[], at: number, reply: unknown, reading: boolean): void {
  const { allowed, debtUs } = parseTokenBucketReply(reply);
  values[at] = reading ? 1 : allowed;
  values[at + 1] = debtUs;
}

/** One pipeline per hash slot, with bounded parallelism; any error reply but NOSCRIPT fails the call. */
async function runParts(
  connection: ClusterConnection,
  parts: readonly Part[],
  options: CommandRunOptions,
): Promise<void> {
  const groups = new Map<number, Part[]>();
  for (const part of parts) {
    const slot = calculateSlot(part.key);
    const group = groups.get(slot);
    if (group) group.push(part);
    else groups.set(slot, [part]);
  }
  const runGroup = async (group: readonly Part[]) => {
    const pipeline = connection.pipeline();
    const counts = group.map((part) => part.append(pipeline));
    const results = ((await withTimeout(pipeline.exec(), options)) ?? []) as PipelineResult[];
    let next = 0;
    group.forEach((part, n) => {
      const replies = results.slice(next, next + counts[n]!);
      next += counts[n]!;
      if (replies.length < counts[n]!) throw new Error("no reply");
      const failure = replies.find(([error]) => error && !error.message.startsWith("NOSCRIPT"))?.[0];
      if (failure) throw failure;
      part.take(replies);
    });
  };
  await forEachBounded([...groups.values()], Math.max(1, options.clusterParallelism), runGroup);
}
