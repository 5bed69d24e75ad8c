import type { DecisionRequest } from "./decision-request.js";
import type {
  Counter,
  EngineStats,
  RateLimitRule,
  RuleLevel,
  RuleNode,
  RuleSet,
  RuleStats,
} from "./rule-set.js";

/**
 * One replica's share of a limit (BACKEND_LOCAL_LIMIT_FRACTION, docs/outages.md):
 * `floor(limit × fraction)`, at least 1 — a replica that allowed nothing would refuse a limit its peers
 * together allow — and 0 stays 0.
 */
export function shareOf(limit: number, fraction: number): number {
  if (limit === 0 || fraction === 1) return limit;
  // The epsilon keeps 0.3 × 10 at 3 despite binary fractions.
  return Math.max(1, Math.floor(limit * fraction + 1e-9));
}

const NOT_COUNTED: Counter = Object.freeze({ add() {} });

/**
 * The rules a stand-in limiter decides with while the counter store fails: the same tree, every limit (and
 * burst, and stacked limit) scaled to {@link shareOf}, and every rule's stats the same counters except
 * `total_hits`, which the request already counted when it was first planned.
 */
export function scaledRuleSet(rules: RuleSet, fraction: number): RuleSet {
  const scaleRule = (rule: RateLimitRule): RateLimitRule => ({
    ...rule,
    requestsPerUnit: shareOf(rule.requestsPerUnit, fraction),
    stats: withoutTotalHits(rule.stats),
    ...(rule.burst !== undefined ? { burst: shareOf(rule.burst, fraction) } : {}),
    ...(rule.stacked !== undefined ? { stacked: rule.stacked.map(scaleRule) } : {}),
  });
  return mappedRuleSet(rules, scaleRule);
}

/**
 * A copy of the rule tree with every node's limit replaced by `mapRule(limit)` (nodes, levels and the
 * wildcard lists copied once each; the rules in force are untouched).
 */
export function mappedRuleSet(rules: RuleSet, mapRule: (rule: RateLimitRule) => RateLimitRule): RuleSet {
  const nodes = new Map<RuleNode, RuleNode>();
  const mapNode = (node: RuleNode): RuleNode => {
    let copy = nodes.get(node);
    if (copy === undefined) {
      copy = {
        ...node,
        limit: node.limit === undefined ? undefined : mapRule(node.limit),
        children: node.children === undefined ? undefined : mapLevel(node.children),
      };
      nodes.set(node, copy);
    }
    return copy;
  };
  const mapLevel = (level: RuleLevel): RuleLevel => ({
    exact: new Map([...level.exact].map(([key, node]) => [key, mapNode(node)])),
    wildcards: level.wildcards.map(mapNode),
  });
  return {
    ...rules,
    domains: new Map([...rules.domains].map(([domain, level]) => [domain, mapLevel(level)])),
  };
}

/** The request with its request-level overrides scaled like the rules ({@link shareOf}). */
export function scaledRequest(request: DecisionRequest, fraction: number): DecisionRequest {
  if (fraction === 1 || !request.descriptors.some((descriptor) => descriptor.limit !== undefined)) {
    return request;
  }
  return {
    ...request,
    descriptors: request.descriptors.map((descriptor) =>
      descriptor.limit === undefined
        ? descriptor
        : {
            ...descriptor,
            limit: {
              ...descriptor.limit,
              requestsPerUnit: shareOf(descriptor.limit.requestsPerUnit, fraction),
            },
          },
    ),
  };
}

const statsWithoutTotalHits = new WeakMap<RuleStats, RuleStats>();

/** `stats` counting everything but `total_hits` (one object per `stats`). */
export function withoutTotalHits(stats: RuleStats): RuleStats {
  let wrapped = statsWithoutTotalHits.get(stats);
  if (wrapped === undefined) {
    wrapped = { ...stats, totalHits: NOT_COUNTED };
    statsWithoutTotalHits.set(stats, wrapped);
  }
  return wrapped;
}

/**
 * Engine stats for deciding a request a second time: request-derived rule stats without `total_hits`, and
 * `domain_not_found`, both counted by the first plan, left alone.
 */
export function restatingEngineStats(stats: EngineStats): EngineStats {
  return {
    ruleStats: (key) => withoutTotalHits(stats.ruleStats(key)),
    domainNotFound: () => NOT_COUNTED,
    globalShadowMode: stats.globalShadowMode,
  };
}
