/**
 * A rule's limits as the algorithms see them (docs/algorithms.md): a rule using `algorithm`,
 * `unit_multiplier`, `burst` or `rate_limits` is planned as one store operation per limit, each decided by
 * its algorithm (src/engine/algorithms/registry.ts). A rule with none of them is the reference's fixed
 * window and keeps the reference's path (`referenceWindow` in src/engine/algorithms/fixed-window.ts).
 */
import { type AlgorithmLimit, windowSecondsFor } from "./algorithms/algorithm-limit.js";
import type { RateLimitRule } from "./rule-set.js";
import { unitSeconds } from "./units.js";

/** Whether a rule needs the algorithms' path: any extension field set, or a `rate_limits` list. */
export function usesExtensions(rule: RateLimitRule): boolean {
  return (
    rule.algorithm !== undefined ||
    rule.unitMultiplier !== undefined ||
    rule.burst !== undefined ||
    rule.reservation !== undefined ||
    (rule.stacked !== undefined && rule.stacked.length > 0)
  );
}

/** The rule and the further limits of its `rate_limits` list, in order. */
export function limitsOf(rule: RateLimitRule): readonly RateLimitRule[] {
  return rule.stacked === undefined || rule.stacked.length === 0 ? [rule] : [rule, ...rule.stacked];
}

/** The fields of a rule (or of a status's `current_limit`, which is one) the algorithms read. */
type LimitFields = Pick<
  RateLimitRule,
  "algorithm" | "requestsPerUnit" | "unit" | "unitMultiplier" | "burst"
> & {
  readonly reservation?: RateLimitRule["reservation"];
};

const algorithmLimits = new WeakMap<LimitFields, AlgorithmLimit>();

/** The algorithm's view of a rule, with the defaults of absent fields; computed once per rule. */
export function algorithmLimitOf(rule: LimitFields): AlgorithmLimit {
  let limit = algorithmLimits.get(rule);
  if (limit === undefined) {
    const unitMultiplier = rule.unitMultiplier ?? 1;
    limit = {
      algorithm: rule.algorithm ?? "fixed_window",
      requestsPerUnit: rule.requestsPerUnit,
      unit: rule.unit,
      unitMultiplier,
      windowSeconds: windowSecondsFor(unitSeconds(rule.unit), unitMultiplier),
      burst: rule.burst ?? rule.requestsPerUnit,
      ...(rule.reservation === undefined ? {} : { reservation: rule.reservation }),
    };
    algorithmLimits.set(rule, limit);
  }
  return limit;
}
