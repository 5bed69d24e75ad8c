import { UNIT_SECOND } from "../units.js";
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

function wholeSecondsAtLeastOne(us: number): number {
  return Math.max(1, Math.ceil(us / 1_000_000));
}
