import { buildRuleSet } from "../config/build-rule-set.js";
import type { Counter, RuleSet, RuleStats } from "../engine/rule-set.js";
import type { StatsRegistry } from "../observability/stats-registry.js";

/** The rate-limit domain of login attempts (its stats are in /stats like any other rule's). */
export const AUTH_DOMAIN = "ratelimitd_auth";

/** Counts nothing: the rule stats that mean nothing for this fixed rule. */
const UNSHOWN: Counter = { add() {} };

/**
 * The fixed rules of the failed-login throttle: domain `ratelimitd_auth`, descriptor `remote_address`,
 * `failuresPerMinute` per minute. Of the rule's stats only two mean something here and are registered:
 * `ratelimit.service.rate_limit.ratelimitd_auth.remote_address.total_hits` (login attempts) and `.over_limit`
 * (attempts refused by the throttle). Near-limit, local-cache and shadow-mode counts of a rule nobody
 * configured would only be noise, so they are not shown.
 */
export function failedAttemptRules(failuresPerMinute: number, stats: StatsRegistry): RuleSet {
  const statsFor = (key: string): RuleStats => {
    const base = `ratelimit.service.rate_limit.${key}`;
    return {
      key,
      totalHits: stats.counter(`${base}.total_hits`),
      overLimit: stats.counter(`${base}.over_limit`),
      nearLimit: UNSHOWN,
      overLimitWithLocalCache: UNSHOWN,
      withinLimit: UNSHOWN,
      shadowMode: UNSHOWN,
    };
  };
  const descriptor = {
    key: "remote_address",
    value: "",
    rateLimit: {
      requestsPerUnit: failuresPerMinute,
      unit: "minute",
      unlimited: false,
      name: "",
      replaces: [],
    },
    descriptors: [],
    shadowMode: false,
    quotaMode: false,
    detailedMetric: false,
    valueToMetric: false,
    shareThreshold: false,
    metadata: undefined,
  };
  return buildRuleSet([{ name: "failed-authentication", domain: AUTH_DOMAIN, descriptors: [descriptor] }], {
    mergeDomainConfig: false,
    statsFor,
  });
}
