import { UNIT_SECOND } from "../units.js";
import type { Algorithm, LimitPolicy } from "./algorithm.js";
import { type AlgorithmLimit, emissionIntervalUsOf } from "./algorithm-limit.js";
import type { BucketOperation } from "./counter-operation.js";
import { TOKEN_TOLERANCE } from "./gcra-step.js";
import { bucketKeyFor } from "./limit-keys.js";
import type { LimitOutcome } from "./limit-outcome.js";

/**
 * The `token_bucket` operation: take `hits` tokens (GCRA) from the bucket keyed by its emission interval.
 * Undefined for a rate of 0: such a bucket never refills, and {@link emptyBucketOutcome} decides without
 * the store.
 */
export function tokenBucketOperation(
  limit: AlgorithmLimit,
  baseKey: string,
  limitIndex: number,
  hits: number,
): BucketOperation | undefined {
  if (!(limit.requestsPerUnit > 0)) return undefined;
  const emissionIntervalUs = emissionIntervalUsOf(limit);
  return {
    kind: "bucket",
    key: bucketKeyFor(baseKey, emissionIntervalUs, limitIndex),
    hits,
    emissionIntervalUs,
    burst: limit.burst,
    perSecond: limit.unit === UNIT_SECOND,
  };
}

/**
 * The decision from the store's `[allowed, debtUs]`, in counter terms with limit = burst: tokens in use
 * before = ceil(debt before / T) (debt before = debtUs − hits × T when allowed, debtUs when refused),
 * after = before + hits, so OVER ⇔ after > burst ⇔ refused. Reset when allowed: until the bucket is full
 * again; when refused: until the request's hits fit (until full when they never can, hits > burst). The
 * local cache keeps the key until the next token, the one a one-hit request would need. Every threshold
 * carries the same tolerance as the store's decision ({@link TOKEN_TOLERANCE}), and the counts are kept on
 * the store's side of the line, so float noise at an exact boundary cannot make them contradict it.
 */
export function tokenBucketOutcome(
  limit: AlgorithmLimit,
  hits: number,
  allowed: number,
  debtUs: number,
): LimitOutcome {
  const burst = limit.burst;
  const interval = emissionIntervalUsOf(limit);
  const toleranceUs = interval * TOKEN_TOLERANCE;
  const capacityUs = burst * interval;
  const debtBeforeUs = allowed ? debtUs - hits * interval : debtUs;
  const tokensBefore = Math.max(0, Math.ceil(debtBeforeUs / interval - TOKEN_TOLERANCE));
  const before = allowed ? Math.min(tokensBefore, burst - hits) : Math.max(tokensBefore, burst - hits + 1);
  const after = before + hits;
  if (allowed) {
    return {
      over: false,
      limit: burst,
      before,
      after,
      remaining: burst - after,
      resetSeconds: wholeSecondsAtLeastOne(debtUs - toleranceUs),
      overLimitCacheMs: 0,
    };
  }
  const fitUs = hits > burst ? debtUs - toleranceUs : debtUs + hits * interval - capacityUs - toleranceUs;
  const nextTokenUs = debtUs + interval - capacityUs - toleranceUs;
  return {
    over: true,
    limit: burst,
    before,
    after,
    remaining: 0,
    resetSeconds: wholeSecondsAtLeastOne(fitUs),
    overLimitCacheMs: Math.max(0, Math.ceil(nextTokenUs / 1000) - 1),
  };
}

/**
 * A token bucket with a rate of 0 (a request-level override of 0 requests) never refills: it is empty,
 * every hit is refused, and nothing changes within a window.
 */
export function emptyBucketOutcome(limit: AlgorithmLimit, hits: number): LimitOutcome {
  const over = hits > 0;
  return {
    over,
    limit: 0,
    before: 0,
    after: hits,
    remaining: 0,
    resetSeconds: limit.windowSeconds,
    overLimitCacheMs: over ? limit.windowSeconds * 1000 : 0,
  };
}

/**
 * `token_bucket`: GCRA over a bucket of `burst` tokens refilled at `requests_per_unit` per window, atomic
 * in the store.
 */
export const tokenBucket: Algorithm<BucketOperation> = {
  usesBurst: true,
  plan: (limit, baseKey, limitIndex, hits) => tokenBucketOperation(limit, baseKey, limitIndex, hits),
  decide: (limit, hits, values, offset) =>
    limit.requestsPerUnit > 0
      ? tokenBucketOutcome(limit, hits, values[offset]!, values[offset + 1]!)
      : emptyBucketOutcome(limit, hits),
  wouldRefuse: (_limit, operation, hits, values, offset) => {
    // The store's own test (gcra-step.ts): the debt after the hits within burst × T, with its tolerance.
    const interval = operation.emissionIntervalUs;
    const debtAfterUs = values[offset + 1]! + hits * interval;
    return debtAfterUs > operation.burst * interval + interval * TOKEN_TOLERANCE;
  },
  releaseOf: () => undefined,
  // A bucket's stored value is its debt in microseconds (0: full).
  countersOf: (operation, values, offset) => [{ key: operation.key, value: values[offset + 1]! }],
  resetWithoutCounts: (limit) => Math.ceil(limit.windowSeconds),
  capacityOf: (limit) => limit.burst,
  policyOf: bucketPolicyOf,
};

/**
 * A bucket's quota is its `burst` (what `r` counts down from, as the legacy RateLimit-Limit), over the
 * time an empty bucket takes to fill: `burst × window / requests_per_unit`, rounded up, so that q/w is
 * still the sustained rate; a bucket with a rate of 0 never fills and has a quota of 0 over its window.
 */
function bucketPolicyOf(limit: AlgorithmLimit): LimitPolicy {
  if (!(limit.requestsPerUnit > 0)) return { quota: 0, windowSeconds: limit.windowSeconds };
  const fillSeconds = Math.ceil((limit.burst * limit.windowSeconds) / limit.requestsPerUnit);
  return { quota: limit.burst, windowSeconds: Math.max(1, fillSeconds) };
}

function wholeSecondsAtLeastOne(us: number): number {
  return Math.max(1, Math.ceil(us / 1_000_000));
}
