import { LIMIT_ALGORITHMS } from "../engine/algorithms/registry.js";
import type { StoreCapabilities } from "../engine/counter-store.js";
import type { RateLimitRule, RuleLevel, RuleSet } from "../engine/rule-set.js";
import { ConfigError } from "../errors.js";

/**
 * Refuses a rule set that asks the counter store for what it cannot count (memcached counts fixed windows
 * only, and keeps no reservation holds): the first such rule, by its full key, with the algorithm or the
 * reservation and the backend. Thrown while the rules load, so the whole set is refused and the previous
 * rules stay (docs/algorithms.md, docs/token-budgets.md).
 */
export function refuseUnsupportedAlgorithms(
  rules: RuleSet,
  capabilities: Pick<StoreCapabilities, "algorithms" | "reservations">,
  backend: string,
): RuleSet {
  const supported = capabilities.algorithms;
  const allAlgorithms = LIMIT_ALGORITHMS.every((algorithm) => supported.includes(algorithm));
  if (allAlgorithms && capabilities.reservations) return rules;
  for (const level of rules.domains.values()) {
    const found = firstUnsupported(level, capabilities);
    if (found === undefined) continue;
    const { rule, reason } = found;
    if (reason === "algorithm") {
      throw new ConfigError(
        rule.fullKey,
        `algorithm ${rule.algorithm} is not supported by the ${backend} backend, which counts ${supported.join(", ")} only`,
      );
    }
    throw new ConfigError(rule.fullKey, reservationRefusal(backend));
  }
  return rules;
}

/**
 * Why `backend` refuses a reservation: memcached keeps no holds; the memory backend keeps them in one thread
 * only, so its table shared by worker threads (WORKERS above 1, docs/workers.md) keeps none.
 */
function reservationRefusal(backend: string): string {
  return backend === "memory"
    ? "reservation is not supported by the memory backend with WORKERS above 1, whose table shared by the worker threads keeps no holds: use the redis backend or WORKERS=1"
    : `reservation is not supported by the ${backend} backend, which keeps no holds: use the redis or memory backend`;
}

interface Unsupported {
  readonly rule: RateLimitRule;
  readonly reason: "algorithm" | "reservation";
}

function firstUnsupported(
  level: RuleLevel,
  capabilities: Pick<StoreCapabilities, "algorithms" | "reservations">,
): Unsupported | undefined {
  for (const node of level.exact.values()) {
    if (node.limit !== undefined) {
      for (const rule of [node.limit, ...(node.limit.stacked ?? [])]) {
        if (!capabilities.algorithms.includes(rule.algorithm ?? "fixed_window"))
          return { rule, reason: "algorithm" };
        if (rule.reservation !== undefined && !capabilities.reservations)
          return { rule, reason: "reservation" };
      }
    }
    const below = node.children && firstUnsupported(node.children, capabilities);
    if (below !== undefined) return below;
  }
  return undefined;
}
