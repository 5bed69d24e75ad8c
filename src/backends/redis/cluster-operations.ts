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
  type ClusterOutcome,
  type CommandRunOptions,
  clusterFailure,
  forEachBounded,
  type NodeFailure,
  primaryOf,
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

/** Commands on one key of one operation, and what to do with their replies. */
interface Part {
  readonly key: string;
  /** The operation's index: a failure of this part fails that operation. */
  readonly operation: number;
  /** Queues the commands; returns how many replies they give. */
  readonly append: (pipeline: ChainableCommander) => number;
  /** Takes the replies (none is an error, NOSCRIPT aside for a bucket). */
  readonly take: (results: readonly PipelineResult[]) => void;
}

/**
 * Counts (or, with `reading`, reads) every operation and answers their values as one flat list,
 * `resultCountOf` per operation, with the operations whose commands failed (see {@link ClusterOutcome}). A
 * bucket whose EVALSHA answers NOSCRIPT is sent again by EVAL, alone.
 */
export async function applyClusterOperations(
  connection: ClusterConnection,
  operations: readonly CounterOperation[],
  reading: boolean,
  options: CommandRunOptions,
): Promise<ClusterOutcome> {
  requireReady(connection, options);
  const values: number[] = [];
  const parts: Part[] = [];
  const unknownScript: { operation: BucketOperation; index: number; at: number }[] = [];
  const unknownReserves: { operation: ReserveOperation; index: number; at: number }[] = [];
  operations.forEach((operation, index) => {
    const at = values.length;
    for (let n = resultCountOf(operation); n > 0; n--) values.push(0);
    const { commands, replyOf, bucket, reserve } = operationCommandsOf(operation, reading);
    if (reserve !== undefined) {
      parts.push(
        reservePart(reserve, index, reading, values, at, () =>
          unknownReserves.push({ operation: reserve, index, at }),
        ),
      );
    }
    commands.forEach((command, c) => {
      parts.push(commandPart(command, index, replyOf.indexOf(c), values, at));
    });
    if (bucket !== undefined) {
      parts.push(
        bucketPart(bucket, index, reading, values, at, () =>
          unknownScript.push({ operation: bucket, index, at }),
        ),
      );
    }
  });
  const failures = new Map<number, NodeFailure>();
  await runParts(connection, parts, options, failures);
  await Promise.all(
    unknownScript.map(async ({ operation, index, at }) => {
      try {
        const args = tokenBucketScriptArgs(operation, reading ? 0 : operation.hits);
        const reply = await withTimeout(connection.eval(TOKEN_BUCKET_SCRIPT, ...args), options);
        setBucketValues(values, at, reply, reading);
      } catch (error) {
        failures.set(index, { node: primaryOf(connection, calculateSlot(operation.key)), error });
      }
    }),
  );
  await Promise.all(
    unknownReserves.map(async ({ operation, index, at }) => {
      try {
        const args = reservationScriptArgs(operation, reading);
        const reply = await withTimeout(connection.eval(RESERVATION_SCRIPT, ...args), options);
        setReserveValues(values, at, reply);
      } catch (error) {
        failures.set(index, { node: primaryOf(connection, calculateSlot(operation.key)), error });
      }
    }),
  );
  return { values, failures };
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
    ({ key, hits, ttlSeconds }, operation): Part => ({
      key,
      operation,
      append: (pipeline) => {
        pipeline.decrby(key, hits).expire(key, ttlSeconds);
        return 2;
      },
      take: () => {},
    }),
  );
  const failures = new Map<number, NodeFailure>();
  await runParts(connection, parts, options, failures);
  for (const { error } of failures.values()) throw clusterFailure(error, options);
}

/**
 * One command `[NAME, key, …args]`. Its reply, when it is the operation's value number `valueIndex` (-1:
 * none, as an EXPIRE's), is a counter — an integer, or a GET's text (absent = 0) — put at
 * `values[at + valueIndex]`.
 */
function commandPart(
  command: readonly string[],
  operation: number,
  valueIndex: number,
  values: number[],
  at: number,
): Part {
  const [name, ...args] = command as [string, ...string[]];
  return {
    key: args[0]!,
    operation,
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
  index: number,
  reading: boolean,
  values: number[],
  at: number,
  unknownScript: () => void,
): Part {
  return {
    key: operation.key,
    operation: index,
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
  index: number,
  reading: boolean,
  values: number[],
  at: number,
  unknownScript: () => void,
): Part {
  return {
    key: operation.key,
    operation: index,
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

/**
 * One pipeline per hash slot, with bounded parallelism. Any error reply but NOSCRIPT fails the part's
 * operation, and a group that fails as a whole (its node lost, no answer in time) fails every operation
 * in it: each goes into `failures` (the first per operation) with the node the group went to.
 */
async function runParts(
  connection: ClusterConnection,
  parts: readonly Part[],
  options: CommandRunOptions,
  failures: Map<number, NodeFailure>,
): Promise<void> {
  const groups = new Map<number, Part[]>();
  for (const part of parts) {
    const slot = calculateSlot(part.key);
    const group = groups.get(slot);
    if (group) group.push(part);
    else groups.set(slot, [part]);
  }
  const fail = (operation: number, failure: NodeFailure) => {
    if (!failures.has(operation)) failures.set(operation, failure);
  };
  const runGroup = async ([slot, group]: [number, Part[]]) => {
    const node = primaryOf(connection, slot);
    let results: PipelineResult[];
    const counts: number[] = [];
    try {
      const pipeline = connection.pipeline();
      for (const part of group) counts.push(part.append(pipeline));
      results = ((await withTimeout(pipeline.exec(), options)) ?? []) as PipelineResult[];
    } catch (error) {
      for (const part of group) fail(part.operation, { node, error });
      return;
    }
    let next = 0;
    group.forEach((part, n) => {
      const replies = results.slice(next, next + counts[n]!);
      next += counts[n]!;
      try {
        if (replies.length < counts[n]!) throw new Error("no reply");
        const failure = replies.find(([error]) => error && !error.message.startsWith("NOSCRIPT"))?.[0];
        if (failure) throw failure;
        part.take(replies);
      } catch (error) {
        fail(part.operation, { node, error });
      }
    });
  };
  await forEachBounded([...groups], Math.max(1, options.clusterParallelism), runGroup);
}
