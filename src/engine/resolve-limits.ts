import type { DecisionDescriptor, DecisionRequest } from "./decision-request.js";
import { limitsOf, usesExtensions } from "./limit-parts.js";
import { type MatchedLimit, matchLimit, overrideStatsKey } from "./rule-matcher.js";
import type { EngineStats, RateLimitRule, RuleLevel, RuleSet, RuleStats } from "./rule-set.js";
import { type UnitValue, unitName } from "./units.js";

/** Limits after GetLimit, `replaces` and `unlimited`, per descriptor. */
export interface ResolvedLimits {
  readonly effective: readonly (MatchedLimit | undefined)[];
  readonly unlimited: readonly boolean[];
  /** Per descriptor whose rule uses the extensions: its limits left after `replaces`. */
  readonly extended: readonly (readonly RateLimitRule[] | undefined)[];
}

/** What resolving counts and logs. */
export interface ResolveOptions {
  readonly stats: EngineStats;
  readonly debug?: ((line: string) => void) | undefined;
}

/** GetLimit for every descriptor, then `replaces` and `unlimited` (the reference's order). */
export function resolveLimits(
  options: ResolveOptions,
  rules: RuleSet,
  request: DecisionRequest,
): ResolvedLimits {
  const { stats, debug } = options;
  const root = rules.domains.get(request.domain);
  const limits = request.descriptors.map((descriptor) => {
    if (debug) debug(`got descriptor: ${descriptor.entries.map((e) => `(${e.key}=${e.value})`).join(",")}`);
    if (root === undefined) {
      stats.domainNotFound(request.domain).add(1);
      return undefined;
    }
    if (descriptor.limit) return overrideLimit(stats, request.domain, descriptor, root);
    return matchLimit(root, request.domain, descriptor.entries, stats);
  });
  const replaced = new Set<string>();
  for (const limit of limits) {
    if (limit === undefined) continue;
    for (const name of limit.rule.replaces) replaced.add(name);
    for (const more of limit.rule.stacked ?? []) for (const name of more.replaces) replaced.add(name);
  }
  const unlimited = limits.map((limit) => limit?.rule.unlimited === true);
  const extended: (readonly RateLimitRule[] | undefined)[] = [];
  const effective = limits.map((limit, i) => {
    if (limit === undefined || unlimited[i]) return undefined;
    if (usesExtensions(limit.rule)) {
      // Each limit of a `rate_limits` list is replaced on its own name.
      const kept = limitsOf(limit.rule).filter((rule) => rule.name === "" || !replaced.has(rule.name));
      if (kept.length === 0) return undefined;
      extended[i] = kept;
      return limit;
    }
    if (limit.rule.name !== "" && replaced.has(limit.rule.name)) return undefined;
    return limit;
  });
  if (debug) {
    effective.forEach((limit) => {
      debug(
        limit
          ? `applying limit: ${limit.rule.requestsPerUnit} requests per ${unitName(limit.rule.unit)}, shadow_mode: ${limit.rule.shadowMode}, quota: ${limit.rule.quotaMode}`
          : "descriptor does not match any limit, no limits applied",
      );
    });
  }
  return { effective, unlimited, extended };
}

/**
 * A request-level override. It keeps the algorithm and the reservation of the rule the descriptor matches
 * (found without touching any stats), with a window of one of its own unit and, for a token bucket, a burst
 * of its own requests_per_unit; a rule without the extensions leaves it the reference's fixed window.
 */
function overrideLimit(
  engineStats: EngineStats,
  domain: string,
  descriptor: DecisionDescriptor,
  root: RuleLevel,
): MatchedLimit {
  const { requestsPerUnit, unit } = descriptor.limit!;
  const stats = engineStats.ruleStats(overrideStatsKey(domain, descriptor.entries));
  const matched = matchLimit(root, domain, descriptor.entries, UNCOUNTED_STATS)?.rule;
  const algorithm = matched?.algorithm;
  // A rule's reservation holds under the override's limit too (docs/token-budgets.md).
  const reservation = matched?.reservation;
  const rule: RateLimitRule = {
    ...(algorithm !== undefined && algorithm !== "fixed_window" ? { algorithm } : {}),
    ...(reservation === undefined ? {} : { algorithm: algorithm ?? "fixed_window", reservation }),
    requestsPerUnit,
    unit: unit as UnitValue,
    name: "",
    replaces: [],
    unlimited: false,
    shadowMode: false,
    quotaMode: false,
    detailedMetric: false,
    fullKey: stats.key,
    stats,
    metadata: undefined,
  };
  return { rule, stats, sharePatterns: undefined };
}

/** Stats for the override's rule lookup, which must not create or count any. */
const UNCOUNTED: RuleStats = Object.freeze({
  key: "",
  totalHits: { add() {} },
  overLimit: { add() {} },
  nearLimit: { add() {} },
  overLimitWithLocalCache: { add() {} },
  withinLimit: { add() {} },
  shadowMode: { add() {} },
});
const UNCOUNTED_STATS: EngineStats = {
  ruleStats: () => UNCOUNTED,
  domainNotFound: () => UNCOUNTED.totalHits,
  globalShadowMode: UNCOUNTED.totalHits,
};
