import { CODE_OK, CODE_OVER_LIMIT, type DescriptorStatus } from "./decision-request.js";
import { nearLimitThreshold } from "./near-limit.js";
import type { RateLimitRule, RuleStats } from "./rule-set.js";

/**
 * Status and stats of one descriptor from its counter (reference `GetResponseDescriptorStatus`).
 * `after` is the counter after adding `hits`; the formulas are the reference's, row for row
 * (test/unit/engine/status-formulas.test.ts).
 * A per-rule shadow mode rewrites OVER_LIMIT to OK and counts `shadow_mode`.
 */
export function statusFromCounter(
  rule: RateLimitRule,
  stats: RuleStats,
  hits: number,
  after: number,
  nearLimitRatio: number,
  resetSeconds: number,
): DescriptorStatus {
  const limit = rule.requestsPerUnit;
  // The reference subtracts in uint64: a counter below the addend (possible when an increment was
  // suppressed) wraps to a huge value and is treated as "already over".
  const before = after >= hits ? after - hits : Number.MAX_SAFE_INTEGER;
  const over = after > limit;
  return statusFromCounts(rule, stats, hits, limit, before, after, nearLimitRatio, over, resetSeconds);
}

/**
 * The same formulas on counter-equivalent figures of any algorithm (src/engine/algorithms/limit-outcome.ts):
 * `limit`, the value `before` and `after` this request's hits, and whether it is `over` (always
 * `after > limit`). `rule` is the limit reported in `current_limit`; remaining is `limit − after`.
 */
export function statusFromCounts(
  rule: RateLimitRule,
  stats: RuleStats,
  hits: number,
  limit: number,
  before: number,
  after: number,
  nearLimitRatio: number,
  over: boolean,
  resetSeconds: number,
): DescriptorStatus {
  const near = nearLimitThreshold(limit, nearLimitRatio);
  if (over) {
    if (before >= limit) stats.overLimit.add(hits);
    else {
      stats.overLimit.add(after - limit);
      stats.nearLimit.add(limit - Math.max(near, before));
    }
    if (rule.shadowMode) {
      stats.shadowMode.add(before >= limit ? hits : after - limit);
      return {
        code: CODE_OK,
        currentLimit: rule,
        limitRemaining: 0,
        durationUntilResetSeconds: resetSeconds,
      };
    }
    return {
      code: CODE_OVER_LIMIT,
      currentLimit: rule,
      limitRemaining: 0,
      durationUntilResetSeconds: resetSeconds,
    };
  }
  if (after > near) stats.nearLimit.add(before >= near ? hits : after - near);
  stats.withinLimit.add(hits);
  return {
    code: CODE_OK,
    currentLimit: rule,
    limitRemaining: limit - after,
    durationUntilResetSeconds: resetSeconds,
  };
}

/** Status of a descriptor answered by the local over-limit cache, without touching the backend. */
export function statusFromLocalCache(
  rule: RateLimitRule,
  stats: RuleStats,
  hits: number,
  resetSeconds: number,
): DescriptorStatus {
  stats.overLimit.add(hits);
  stats.overLimitWithLocalCache.add(hits);
  if (rule.shadowMode) {
    stats.shadowMode.add(hits);
    return { code: CODE_OK, currentLimit: rule, limitRemaining: 0, durationUntilResetSeconds: resetSeconds };
  }
  return {
    code: CODE_OVER_LIMIT,
    currentLimit: rule,
    limitRemaining: 0,
    durationUntilResetSeconds: resetSeconds,
  };
}
