import type { AlgorithmLimit } from "./algorithm-limit.js";
import type { CounterOperation } from "./counter-operation.js";
import { fixedWindowOperation, fixedWindowOutcome } from "./fixed-window.js";
import type { LimitOutcome } from "./limit-outcome.js";
import { slidingWindowOperation, slidingWindowOutcome } from "./sliding-window.js";
import { emptyBucketOutcome, tokenBucketOperation, tokenBucketOutcome } from "./token-bucket.js";

/**
 * The store operation for one limit of a descriptor, by the limit's algorithm: `baseKey` from
 * `baseKeyFor`, `limitIndex` its 0-based place in `rate_limits` (0 for `rate_limit`), `jitterSeconds` the
 * extra TTL drawn for this key (ignored by token buckets, whose TTL follows their debt). Undefined when
 * the limit is decided without the store (a token bucket with a rate of 0); {@link outcomeFor} then
 * ignores the results.
 */
export function operationFor(
  limit: AlgorithmLimit,
  baseKey: string,
  limitIndex: number,
  hits: number,
  nowMs: number,
  jitterSeconds: number,
): CounterOperation | undefined {
  switch (limit.algorithm) {
    case "fixed_window":
      return fixedWindowOperation(limit, baseKey, limitIndex, hits, nowMs, jitterSeconds);
    case "sliding_window":
      return slidingWindowOperation(limit, baseKey, limitIndex, hits, nowMs, jitterSeconds);
    case "token_bucket":
      return tokenBucketOperation(limit, baseKey, limitIndex, hits);
  }
}

/**
 * The limit's outcome from the store's answer to {@link operationFor}'s operation: its values start at
 * `results[offset]` (`resultCountOf(operation)` of them). `nowMs` is the clock reading the operation was
 * planned with (a sliding window weighs the previous window by it; a fixed window's reset counts from
 * it); token buckets use the store's clock, already inside the debt.
 */
export function outcomeFor(
  limit: AlgorithmLimit,
  hits: number,
  results: ArrayLike<number>,
  offset: number,
  nowMs: number,
): LimitOutcome {
  switch (limit.algorithm) {
    case "fixed_window":
      return fixedWindowOutcome(limit, hits, results[offset]!, nowMs);
    case "sliding_window":
      return slidingWindowOutcome(limit, hits, results[offset]!, results[offset + 1]!, nowMs);
    case "token_bucket":
      if (!(limit.requestsPerUnit > 0)) return emptyBucketOutcome(limit, hits);
      return tokenBucketOutcome(limit, hits, results[offset]!, results[offset + 1]!);
  }
}
