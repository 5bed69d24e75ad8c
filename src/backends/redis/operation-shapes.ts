/**
 * What each kind of counter operation is in Redis: the one place that says it, shared by the RESP path
 * (resp-operations.ts) and the cluster path (cluster-operations.ts). A fixed window's operation is
 * INCRBY + EXPIRE (the reference's pair); a sliding window's adds a GET of the previous window; a token
 * bucket's is a step of the script of token-bucket-script.ts; a reservation's, of reservation-script.ts. A new kind of operation fails to compile
 * here until it says its commands.
 */
import {
  type BucketOperation,
  type CounterOperation,
  type ReserveOperation,
  resultCountOf,
  unknownOperation,
} from "../../engine/algorithms/counter-operation.js";

/** One operation's Redis commands, and which of their replies give its values. */
export interface OperationCommands {
  /** Plain commands `[NAME, key, …args]`, in order; on a cluster each goes to its key's node. */
  readonly commands: readonly (readonly string[])[];
  /** Per value of the operation (`resultCountOf` of them): the index of the command whose reply it is. */
  readonly replyOf: readonly number[];
  /**
   * A token bucket's step, run by the script instead of plain commands: values `[allowed, debtUs]`
   * (`[1, debtUs]` when reading); undefined for the other kinds.
   */
  readonly bucket: BucketOperation | undefined;
  /**
   * A reservation step, run by the script of reservation-script.ts (a call of its own) instead of plain
   * commands: its six values; absent for the other kinds.
   */
  readonly reserve?: ReserveOperation;
}

/**
 * The commands of `operation` when counting — fixed: INCRBY + EXPIRE → [count]; sliding: INCRBY + EXPIRE
 * + GET previousKey → [count, previous] — or when `reading` — fixed: GET → [count]; sliding: GET key +
 * GET previousKey. A counter reply is an integer or a GET's text (absent = 0).
 */
export function operationCommandsOf(operation: CounterOperation, reading: boolean): OperationCommands {
  switch (operation.kind) {
    case undefined:
    case "fixed":
      return reading
        ? { commands: [["GET", operation.key]], replyOf: [0], bucket: undefined }
        : {
            commands: countCommands(operation.key, operation.hits, operation.ttlSeconds),
            replyOf: [0],
            bucket: undefined,
          };
    case "sliding":
      return reading
        ? {
            commands: [
              ["GET", operation.key],
              ["GET", operation.previousKey],
            ],
            replyOf: [0, 1],
            bucket: undefined,
          }
        : {
            commands: [
              ...countCommands(operation.key, operation.hits, operation.ttlSeconds),
              ["GET", operation.previousKey],
            ],
            replyOf: [0, 2],
            bucket: undefined,
          };
    case "bucket":
      return { commands: [], replyOf: [], bucket: operation };
    case "reserve":
      return { commands: [], replyOf: [], bucket: undefined, reserve: operation };
    default:
      return unknownOperation(operation);
  }
}

/**
 * Whether every operation is a fixed window's: such requests keep the reference's commands and the
 * integer fast path (encodeIncrements, one counter every second reply).
 */
export function onlyFixed(operations: readonly CounterOperation[]): boolean {
  for (const operation of operations) {
    if (operation.kind !== undefined && operation.kind !== "fixed") return false;
  }
  return true;
}

/**
 * Commands one operation sends when counting: fixed 2, sliding 3, bucket 1 (its script call, though a
 * single Redis runs a request's buckets in one call). Kept apart from {@link operationCommandsOf} so that counting
 * them allocates nothing (test/unit/backends/redis/operation-shapes.test.ts holds the two together).
 */
export function commandCountOf(operation: CounterOperation): number {
  switch (operation.kind) {
    case undefined:
    case "fixed":
      return 2;
    case "sliding":
      return 3;
    case "bucket":
    case "reserve":
      return 1;
    default:
      return unknownOperation(operation);
  }
}

/** Commands `operations` send when counting, for REDIS_PIPELINE_LIMIT and the trace span. */
export function commandsOf(operations: readonly CounterOperation[]): number {
  let commands = 0;
  for (const operation of operations) commands += commandCountOf(operation);
  return commands;
}

/** How many numbers the store answers for `operations` (`resultCountOf` summed). */
export function resultsOf(operations: readonly CounterOperation[]): number {
  let results = 0;
  for (const operation of operations) results += resultCountOf(operation);
  return results;
}

/** `INCRBY key hits` + `EXPIRE key ttlSeconds`: the reference's pair. */
function countCommands(key: string, hits: number, ttlSeconds: number): string[][] {
  return [
    ["INCRBY", key, String(hits)],
    ["EXPIRE", key, String(ttlSeconds)],
  ];
}
