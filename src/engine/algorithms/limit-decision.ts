/**
 * A limit's operation and outcome by its algorithm's name, for callers that hold a bare
 * {@link AlgorithmLimit} (models and property tests): the registry's module does the work.
 */
import type { AlgorithmLimit } from "./algorithm-limit.js";
import type { CounterOperation } from "./counter-operation.js";
import type { LimitOutcome } from "./limit-outcome.js";
import { algorithmNamed } from "./registry.js";

/** The store operation for one limit (`Algorithm.plan`); undefined when decided without the store. */
export function operationFor(
  limit: AlgorithmLimit,
  baseKey: string,
  limitIndex: number,
  hits: number,
  nowMs: number,
  jitterSeconds: number,
): CounterOperation | undefined {
  return algorithmNamed(limit.algorithm).plan(limit, baseKey, limitIndex, hits, nowMs, jitterSeconds);
}

/**
 * The limit's outcome from the store's answer to {@link operationFor}'s operation, its values starting at
 * `results[offset]` (`Algorithm.decide`), at the clock reading `nowMs` it was planned with.
 */
export function outcomeFor(
  limit: AlgorithmLimit,
  hits: number,
  results: ArrayLike<number>,
  offset: number,
  nowMs: number,
): LimitOutcome {
  return algorithmNamed(limit.algorithm).decide(limit, hits, results, offset, nowMs);
}
