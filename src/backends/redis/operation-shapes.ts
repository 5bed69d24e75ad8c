/**
 * How many Redis commands each counter operation takes, shared by the RESP and the cluster paths. A fixed
 * window's operation is INCRBY + EXPIRE (the reference's pair); a sliding window's adds a GET of the
 * previous window; a token bucket's is one EVALSHA of src/backends/redis/token-bucket-script.ts.
 */
import { type CounterOperation, resultCountOf } from "../../engine/algorithms/counter-operation.js";

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

/** Commands one operation sends when counting: fixed 2, sliding 3, bucket 1. */
export function commandCountOf(operation: CounterOperation): number {
  return operation.kind === "sliding" ? 3 : operation.kind === "bucket" ? 1 : 2;
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
