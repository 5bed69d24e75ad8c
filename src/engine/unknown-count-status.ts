import { algorithmNamed } from "./algorithms/registry.js";
import { CODE_OK, CODE_OVER_LIMIT, type DescriptorStatus } from "./decision-request.js";
import { algorithmLimitOf } from "./limit-parts.js";
import type { RateLimitRule } from "./rule-set.js";

/** What BACKEND_FAILURE_MODE answers a limited descriptor with when its count cannot be known. */
export type UnknownCountAnswer = "allow" | "deny";

/**
 * The status of a limited descriptor whose counter store could not be asked (docs/outages.md): `allow`
 * answers OK with the remaining figures of an empty window, `deny` answers OVER_LIMIT with nothing remaining
 * — except for a rule in shadow mode, which never refuses. The reset is the algorithm's
 * (`Algorithm.resetWithoutCounts`): the time to the fixed window's end, or a sliding window's or token
 * bucket's whole length. No stat is counted: nothing was.
 */
export function unknownCountStatus(
  rule: RateLimitRule,
  hits: number,
  answer: UnknownCountAnswer,
  nowSeconds: number,
): DescriptorStatus {
  const refuse = answer === "deny" && !rule.shadowMode;
  return {
    code: refuse ? CODE_OVER_LIMIT : CODE_OK,
    currentLimit: rule,
    limitRemaining: refuse ? 0 : Math.max(0, rule.requestsPerUnit - hits),
    durationUntilResetSeconds: resetOf(rule, nowSeconds),
  };
}

/** The algorithm's reset without counts; the reference's fixed window is `fixed_window`'s of one unit. */
function resetOf(rule: RateLimitRule, nowSeconds: number): number {
  const limit = algorithmLimitOf(rule);
  return algorithmNamed(limit.algorithm).resetWithoutCounts(limit, nowSeconds);
}
