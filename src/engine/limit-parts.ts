/**
 * The extensions' side of a decision (README "Beyond the reference"): descriptors whose rule uses
 * `algorithm`, `unit_multiplier` or `rate_limits` are planned here as one store operation per limit and
 * decided from every limit's outcome. Rules without them never come here and keep the reference's code
 * path in decision-engine.ts.
 */
import { type AlgorithmLimit, windowSecondsFor } from "./algorithms/algorithm-limit.js";
import { closestToRefusing } from "./algorithms/closest-to-refusing.js";
import type { CounterOperation } from "./algorithms/counter-operation.js";
import { TOKEN_TOLERANCE } from "./algorithms/gcra-step.js";
import { outcomeFor } from "./algorithms/limit-decision.js";
import type { LimitOutcome } from "./algorithms/limit-outcome.js";
import type { RateLimitRule } from "./rule-set.js";
import { unitSeconds } from "./units.js";

/** One limit of an extended descriptor, as planned. */
export interface PlannedPart {
  readonly rule: RateLimitRule;
  readonly limit: AlgorithmLimit;
  /** Undefined when decided without the store (a token bucket with a rate of 0). */
  readonly operation: CounterOperation | undefined;
  /** Where its values start in the store's flat answer; -1 without an operation. */
  readonly offset: number;
  /**
   * Its place in the plan's increments; -1 without an operation. The increment sent may differ from
   * `operation`: STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT replaces it with one of 0 hits.
   */
  readonly increment: number;
}

/** What the parts of one descriptor decided: every outcome, and the one its status reports. */
export interface PartsOutcome {
  readonly outcomes: readonly LimitOutcome[];
  /** The limit closest to refusing: `current_limit`, `limit_remaining`, `duration_until_reset`. */
  readonly chosen: number;
  /** The outcome the stats formulas read: the first over limit, else the chosen one. */
  readonly counted: number;
  readonly over: boolean;
}

/** Whether a rule needs this path: any extension field set, or a `rate_limits` list. */
export function usesExtensions(rule: RateLimitRule): boolean {
  return (
    rule.algorithm !== undefined ||
    rule.unitMultiplier !== undefined ||
    rule.burst !== undefined ||
    (rule.stacked !== undefined && rule.stacked.length > 0)
  );
}

/** The rule and the further limits of its `rate_limits` list, in order. */
export function limitsOf(rule: RateLimitRule): readonly RateLimitRule[] {
  return rule.stacked === undefined || rule.stacked.length === 0 ? [rule] : [rule, ...rule.stacked];
}

const algorithmLimits = new WeakMap<RateLimitRule, AlgorithmLimit>();

/** The algorithm's view of a rule, with the defaults of absent fields; computed once per rule. */
export function algorithmLimitOf(rule: RateLimitRule): AlgorithmLimit {
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
    };
    algorithmLimits.set(rule, limit);
  }
  return limit;
}

/** Every part's outcome from the store's flat answer, at the clock reading the parts were planned with. */
export function decideParts(
  parts: readonly PlannedPart[],
  hits: number,
  values: ArrayLike<number>,
  plannedMs: number,
): PartsOutcome {
  const outcomes = parts.map((part) => outcomeFor(part.limit, hits, values, part.offset, plannedMs));
  const chosen = closestToRefusing(outcomes);
  const firstOver = outcomes.findIndex((outcome) => outcome.over);
  return { outcomes, chosen, counted: firstOver >= 0 ? firstOver : chosen, over: firstOver >= 0 };
}

/**
 * STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT for one operation: whether `hits` would be refused, from the
 * store's read (`readOperation`'s shape at `values[offset]`) at `nowMs`.
 */
export function wouldRefuse(
  limit: AlgorithmLimit,
  operation: CounterOperation,
  hits: number,
  values: ArrayLike<number>,
  offset: number,
  nowMs: number,
): boolean {
  switch (operation.kind) {
    case "bucket": {
      // The store's own test (gcra-step.ts): the debt after the hits within burst × T, with its tolerance.
      const interval = operation.emissionIntervalUs;
      const debtAfterUs = values[offset + 1]! + hits * interval;
      return debtAfterUs > operation.burst * interval + interval * TOKEN_TOLERANCE;
    }
    case "sliding":
      return outcomeFor(limit, hits, [values[offset]! + hits, values[offset + 1]!], 0, nowMs).over;
    default:
      return values[offset]! + hits > limit.requestsPerUnit;
  }
}
