/**
 * The deciding half of a decision: one limited descriptor's status from the store's values, by the
 * reference's formulas for its fixed window or by each limit's algorithm for the extensions.
 */
import { closestToRefusing } from "./algorithms/closest-to-refusing.js";
import { referenceWindow } from "./algorithms/fixed-window.js";
import type { LimitOutcome } from "./algorithms/limit-outcome.js";
import type { ActiveLimit, DecisionPlan, PlannedLimit } from "./decision-plan.js";
import { CODE_OVER_LIMIT, type DescriptorStatus } from "./decision-request.js";
import { statusFromCounter, statusFromCounts, statusFromLocalCache } from "./descriptor-status.js";
import type { LimitFigures } from "./ietf-headers.js";
import type { OverLimitCache } from "./over-limit-cache.js";

/** What deciding needs of the engine's options. */
export interface DecideOptions {
  readonly nearLimitRatio: number;
  readonly localCache: OverLimitCache | undefined;
  readonly debug?: ((line: string) => void) | undefined;
}

/** What the limits of one descriptor decided: every outcome, and the one its status reports. */
interface LimitsOutcome {
  readonly outcomes: readonly LimitOutcome[];
  /** The limit closest to refusing: `current_limit`, `limit_remaining`, `duration_until_reset`. */
  readonly chosen: number;
  /** The outcome the stats formulas read: the first over limit, else the chosen one. */
  readonly counted: number;
  readonly over: boolean;
}

/**
 * The status of `active` from the store's values, `nowSeconds` / `nowMs` read after the store answered.
 * `reportParts` receives each limit's figures when the extensions decided (the IETF fields show them).
 */
export function decideLimits(
  options: DecideOptions,
  plan: DecisionPlan,
  active: ActiveLimit,
  values: ArrayLike<number>,
  nowSeconds: number,
  nowMs: number,
  reportParts: (figures: readonly LimitFigures[]) => void,
): DescriptorStatus {
  if (active.reference) return referenceStatus(options, active, values, nowSeconds);
  return algorithmsStatus(options, plan, active, values, nowMs, reportParts);
}

/** Every limit's outcome from the store's flat answer, at the clock reading the limits were planned with. */
function decideParts(
  limits: readonly PlannedLimit[],
  hits: number,
  values: ArrayLike<number>,
  plannedMs: number,
): LimitsOutcome {
  const outcomes = limits.map((part) =>
    part.algorithm.decide(part.limit, hits, values, part.offset, plannedMs),
  );
  const chosen = closestToRefusing(outcomes);
  const firstOver = outcomes.findIndex((outcome) => outcome.over);
  return { outcomes, chosen, counted: firstOver >= 0 ? firstOver : chosen, over: firstOver >= 0 };
}

/**
 * The reference's decision for its fixed window: its counter after the increment, the reset to the
 * window's end when the store has answered, an over key remembered by the local cache for a window.
 */
function referenceStatus(
  options: DecideOptions,
  active: ActiveLimit,
  values: ArrayLike<number>,
  nowSeconds: number,
): DescriptorStatus {
  const { rule, stats, hits, cacheKey } = active;
  const reset = referenceWindow.resetSeconds(rule.unit, nowSeconds);
  if (active.localCacheHit) return statusFromLocalCache(rule, stats, hits, reset);
  const after = values[active.limits[0]!.offset]!;
  const status = statusFromCounter(rule, stats, hits, after, options.nearLimitRatio, reset);
  if (after > rule.requestsPerUnit) {
    const cacheSeconds = referenceWindow.overLimitCacheSeconds(rule.unit);
    options.localCache?.markOverLimit(cacheKey, rule.requestsPerUnit, cacheSeconds);
  }
  options.debug?.(
    `cache key: ${cacheKey} current: ${after} limit: ${rule.requestsPerUnit}` +
      (status.code === CODE_OVER_LIMIT ? " (over limit)" : ""),
  );
  return status;
}

/**
 * The status of a descriptor whose rule uses the extensions: OVER_LIMIT when any of its limits is, the
 * figures of the limit closest to refusing, the stats formulas on the first over limit (else on that
 * one). Over limits are remembered by the local cache for as long as they certainly stay over, what a
 * refused request gives back is queued for release, and a local-cache hit resets when its entry ends.
 */
function algorithmsStatus(
  options: DecideOptions,
  plan: DecisionPlan,
  active: ActiveLimit,
  values: ArrayLike<number>,
  nowMs: number,
  reportParts: (figures: readonly LimitFigures[]) => void,
): DescriptorStatus {
  const { localCache, nearLimitRatio, debug } = options;
  const { limits, hits } = active;
  if (active.localCacheHit) {
    const reset = Math.max(1, Math.ceil((active.cacheRemainingMs ?? 0) / 1000));
    return statusFromLocalCache(active.rule, active.stats, hits, reset);
  }
  const decided = decideParts(limits, hits, values, plan.nowMs);
  reportParts(decided.outcomes);
  decided.outcomes.forEach((outcome, i) => {
    const part = limits[i]!;
    if (!outcome.over || part.operation === undefined) return;
    // What was counted is the increment sent, which suppression may have set to 0 hits.
    const release = part.algorithm.releaseOf(plan.increments[part.index]!);
    if (release !== undefined) plan.releases.push(release);
    // The outcome describes the moment of the plan (a token bucket's, a moment of the round trip): the
    // time since then counts against how long the key stays certainly over.
    const cacheMs = outcome.overLimitCacheMs - (nowMs - plan.nowMs);
    if (cacheMs > 0) localCache?.markOverLimit(part.operation.key, part.rule.requestsPerUnit, cacheMs / 1000);
  });
  const chosen = decided.outcomes[decided.chosen]!;
  const counted = decided.outcomes[decided.counted]!;
  debug?.(
    limits
      .map(
        (part, i) =>
          `cache key: ${part.operation?.key ?? "(none)"} ${part.limit.algorithm} after: ${decided.outcomes[i]!.after} limit: ${decided.outcomes[i]!.limit}` +
          (decided.outcomes[i]!.over ? " (over limit)" : ""),
      )
      .join("; "),
  );
  const status = statusFromCounts(
    limits[decided.chosen]!.rule,
    active.stats,
    hits,
    counted.limit,
    counted.before,
    counted.after,
    nearLimitRatio,
    decided.over,
    chosen.resetSeconds,
  );
  // Remaining is the chosen limit's, which need not be the limit the stats counted.
  status.limitRemaining = decided.over ? 0 : chosen.remaining;
  return status;
}
