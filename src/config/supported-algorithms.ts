import type { LimitAlgorithm } from "../engine/algorithms/algorithm-limit.js";
import { LIMIT_ALGORITHMS } from "../engine/algorithms/registry.js";
import type { RateLimitRule, RuleLevel, RuleSet } from "../engine/rule-set.js";
import { ConfigError } from "../errors.js";

/**
 * Refuses a rule set that asks the counter store for an algorithm it cannot count (memcached counts fixed
 * windows only): the first such rule, by its full key, with the algorithm and the backend. Thrown while the
 * rules load, so the whole set is refused and the previous rules stay (docs/algorithms.md).
 */
export function refuseUnsupportedAlgorithms(
  rules: RuleSet,
  supported: readonly LimitAlgorithm[],
  backend: string,
): RuleSet {
  if (LIMIT_ALGORITHMS.every((algorithm) => supported.includes(algorithm))) return rules;
  for (const level of rules.domains.values()) {
    const rule = firstUnsupported(level, supported);
    if (rule !== undefined) {
      throw new ConfigError(
        rule.fullKey,
        `algorithm ${rule.algorithm} is not supported by the ${backend} backend, which counts ${supported.join(", ")} only`,
      );
    }
  }
  return rules;
}

function firstUnsupported(level: RuleLevel, supported: readonly LimitAlgorithm[]): RateLimitRule | undefined {
  for (const node of level.exact.values()) {
    if (node.limit !== undefined) {
      for (const rule of [node.limit, ...(node.limit.stacked ?? [])]) {
        if (!supported.includes(rule.algorithm ?? "fixed_window")) return rule;
      }
    }
    const below = node.children && firstUnsupported(node.children, supported);
    if (below !== undefined) return below;
  }
  return undefined;
}
