import { UNIT_SECOND } from "../units.js";
import type { Algorithm } from "./algorithm.js";
import { type AlgorithmLimit, windowStartMsOf } from "./algorithm-limit.js";
import type { SlidingOperation } from "./counter-operation.js";
import { windowKeyFor } from "./limit-keys.js";
import type { LimitOutcome } from "./limit-outcome.js";

/**
 * The `sliding_window` operation at `nowMs`: count the hits in the current fixed window's counter (the
 * same key as `fixed_window`, so switching between the two keeps the counts) and read the previous
 * window's. The counter lives two windows plus `jitterSeconds`, as it is read as "previous" for one more.
 */
export function slidingWindowOperation(
  limit: AlgorithmLimit,
  baseKey: string,
  limitIndex: number,
  hits: number,
  nowMs: number,
  jitterSeconds: number,
): SlidingOperation {
  const { windowSeconds, unitMultiplier } = limit;
  const startSeconds = windowStartMsOf(nowMs, windowSeconds) / 1000;
  return {
    kind: "sliding",
    key: windowKeyFor(baseKey, startSeconds, unitMultiplier, limitIndex),
    previousKey: windowKeyFor(baseKey, startSeconds - windowSeconds, unitMultiplier, limitIndex),
    hits,
    ttlSeconds: 2 * windowSeconds + jitterSeconds,
    perSecond: limit.unit === UNIT_SECOND,
  };
}

/**
 * The sliding-window counter's decision at `nowMs` (the clock reading the operation was planned with):
 * `after = floor(previousCount × (1 − elapsed / window)) + countAfter`, OVER when `after > limit`.
 * - reset when it fits: until the estimate decays to 0 — the end of the next window when this window has
 *   counts (they become "previous" there), else the end of this one.
 * - reset when over: the first whole second k ≥ 1 at which the same request fits if nothing else arrives,
 *   this request's hits given back (a refused request is released); two windows when it never fits
 *   (hits > limit).
 * - the local cache keeps the key while a one-hit request is still refused, with the same assumptions.
 *   Hits of other refused requests whose release has not landed yet still count in `countAfter`, so
 *   under concurrent refusals the reset and the cache time can be longer than they will turn out.
 * A negative count (a release that raced the counter's expiry) counts as 0.
 */
export function slidingWindowOutcome(
  limit: AlgorithmLimit,
  hits: number,
  countAfter: number,
  previousCount: number,
  nowMs: number,
): LimitOutcome {
  const { requestsPerUnit, windowSeconds } = limit;
  const windowMs = windowSeconds * 1000;
  const elapsedMs = nowMs - windowStartMsOf(nowMs, windowSeconds);
  const previous = Math.max(0, previousCount);
  const current = Math.max(0, countAfter);
  const after = estimateAt(elapsedMs, windowMs, previous, current);
  const before = Math.max(0, after - hits);
  if (after <= requestsPerUnit) {
    const decayedMs = (current > 0 ? 2 : 1) * windowMs - elapsedMs;
    return {
      over: false,
      limit: requestsPerUnit,
      before,
      after,
      remaining: requestsPerUnit - after,
      resetSeconds: Math.max(1, Math.ceil(decayedMs / 1000)),
      overLimitCacheMs: 0,
    };
  }
  const released = Math.max(0, current - hits);
  const endMs = 2 * windowMs - elapsedMs;
  const fitsAfter = (delayMs: number, requestHits: number) =>
    estimateAt(elapsedMs + delayMs, windowMs, previous, released) + requestHits <= requestsPerUnit;
  const resetSeconds =
    hits > requestsPerUnit
      ? 2 * windowSeconds
      : firstTrue(1, Math.ceil(endMs / 1000), (k) => fitsAfter(k * 1000, hits));
  const lastRefusedMs =
    requestsPerUnit < 1 ? Math.ceil(endMs) : firstTrue(0, Math.ceil(endMs), (m) => fitsAfter(m, 1)) - 1;
  return {
    over: true,
    limit: requestsPerUnit,
    before,
    after,
    remaining: 0,
    resetSeconds,
    overLimitCacheMs: Math.max(0, lastRefusedMs),
  };
}

/**
 * `sliding_window`: the current window's count plus the previous window's, weighed by how much of it the
 * sliding window still covers. A refused request gives its hits back.
 */
export const slidingWindow: Algorithm<SlidingOperation> = {
  usesBurst: false,
  plan: slidingWindowOperation,
  decide: (limit, hits, values, offset, plannedMs) =>
    slidingWindowOutcome(limit, hits, values[offset]!, values[offset + 1]!, plannedMs),
  // The read's count plus the hits, as the increment would answer.
  wouldRefuse: (limit, _operation, hits, values, offset, nowMs) =>
    slidingWindowOutcome(limit, hits, values[offset]! + hits, values[offset + 1]!, nowMs).over,
  // Suppressed to 0 hits by STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: nothing was counted.
  releaseOf: (sent) => (sent.hits > 0 ? sent : undefined),
  countersOf: (operation, values, offset) => [
    { key: operation.key, value: values[offset]! },
    { key: operation.previousKey, value: values[offset + 1]! },
  ],
  // The estimate decays over a whole window.
  resetWithoutCounts: (limit) => Math.ceil(limit.windowSeconds),
  capacityOf: (limit) => limit.requestsPerUnit,
  policyOf: (limit) => ({ quota: limit.requestsPerUnit, windowSeconds: limit.windowSeconds }),
};

/**
 * The estimate `offsetMs` after the current window's start, with `previous` and `current` as they are
 * now and nothing else arriving: this window weighs the previous one down to 0; in the next, `current`
 * is the previous one; after that, nothing is left.
 */
function estimateAt(offsetMs: number, windowMs: number, previous: number, current: number): number {
  if (offsetMs < windowMs) return weighted(previous, windowMs - offsetMs, windowMs) + current;
  if (offsetMs < 2 * windowMs) return weighted(current, 2 * windowMs - offsetMs, windowMs);
  return 0;
}

/**
 * floor(count × remainingMs / windowMs) in integers: `count × (1 − elapsed / window)` in doubles lands just
 * below a whole result (5 × (1 − 0.8) = 0.9999999999999998) and floors one too low, allowing a request over
 * the limit (test/integration/backends/algorithm-model.test.ts). BigInt once the product passes 2⁵³.
 */
function weighted(count: number, remainingMs: number, windowMs: number): number {
  const product = count * remainingMs;
  // A count no store writes (a foreign value read as Infinity) stays as large as it is.
  if (Number.isSafeInteger(product) || !Number.isFinite(product)) return Math.floor(product / windowMs);
  return Number((BigInt(Math.floor(count)) * BigInt(Math.floor(remainingMs))) / BigInt(windowMs));
}

/**
 * The smallest integer in [low, high] for which `test` holds, `test` being monotone (false … true) and
 * true at `high`. The estimate never grows while nothing arrives, so this is a plain binary search.
 */
function firstTrue(low: number, high: number, test: (value: number) => boolean): number {
  let lo = low;
  let hi = high;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (test(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
