import type { OverLimitCache } from "../over-limit-cache.js";
import type { Counter, EngineStats, RateLimitRule, RuleStats } from "../rule-set.js";

const NOT_COUNTED: Counter = Object.freeze({ add() {} });

/** Rule stats that count nothing: what `POST /explain` decides with. */
export const UNCOUNTED_RULE_STATS: RuleStats = Object.freeze({
  key: "",
  totalHits: NOT_COUNTED,
  overLimit: NOT_COUNTED,
  nearLimit: NOT_COUNTED,
  overLimitWithLocalCache: NOT_COUNTED,
  withinLimit: NOT_COUNTED,
  shadowMode: NOT_COUNTED,
});

/** Engine stats that create and count nothing. */
export const UNCOUNTED_ENGINE_STATS: EngineStats = {
  ruleStats: () => UNCOUNTED_RULE_STATS,
  domainNotFound: () => NOT_COUNTED,
  globalShadowMode: NOT_COUNTED,
};

/** `rule` (and its stacked limits) with stats that count nothing. */
export function uncountedRule(rule: RateLimitRule): RateLimitRule {
  return {
    ...rule,
    stats: UNCOUNTED_RULE_STATS,
    ...(rule.stacked !== undefined ? { stacked: rule.stacked.map(uncountedRule) } : {}),
  };
}

/**
 * The local over-limit cache, looked at without changing it: lookups through `peek` (no hit or miss
 * counted, no recency moved) and nothing remembered.
 */
export function lookOnly(cache: OverLimitCache | undefined): OverLimitCache | undefined {
  if (cache === undefined) return undefined;
  return {
    isOverLimit: (key, limit) => cache.peek?.(key, limit) ?? cache.isOverLimit(key, limit),
    markOverLimit: () => {},
    ...(cache.remainingMs
      ? { remainingMs: (key: string, limit: number) => cache.remainingMs!(key, limit) }
      : {}),
  };
}
