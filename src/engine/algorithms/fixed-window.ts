import { cacheKeyFor, secondsUntilReset, windowStart } from "../cache-key.js";
import type { DecisionEntry } from "../decision-request.js";
import { UNIT_SECOND, type UnitValue, unitSeconds } from "../units.js";
import type { Algorithm } from "./algorithm.js";
import { type AlgorithmLimit, windowStartMsOf } from "./algorithm-limit.js";
import type { FixedOperation } from "./counter-operation.js";
import { windowKeyFor } from "./limit-keys.js";
import type { LimitOutcome } from "./limit-outcome.js";

/**
 * The `fixed_window` operation at `nowMs`: the reference's INCRBY + EXPIRE on the window's counter, which
 * lives one window plus `jitterSeconds` (EXPIRATION_JITTER_MAX_SECONDS, drawn by the caller).
 */
export function fixedWindowOperation(
  limit: AlgorithmLimit,
  baseKey: string,
  limitIndex: number,
  hits: number,
  nowMs: number,
  jitterSeconds: number,
): FixedOperation {
  const startSeconds = windowStartMsOf(nowMs, limit.windowSeconds) / 1000;
  return {
    kind: "fixed",
    key: windowKeyFor(baseKey, startSeconds, limit.unitMultiplier, limitIndex),
    hits,
    ttlSeconds: limit.windowSeconds + jitterSeconds,
    perSecond: limit.unit === UNIT_SECOND,
  };
}

/**
 * The reference's decision from the counter after the increment: OVER when `countAfter > limit`; reset =
 * seconds to the window's end (1 … window); an over key stays over until the window ends (the next
 * window has another key). `before` is `countAfter − hits`, except that a counter below the hits
 * (possible when STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT suppressed the increment) gives
 * Number.MAX_SAFE_INTEGER, as the reference's uint64 subtraction wraps and counts it as already over.
 */
export function fixedWindowOutcome(
  limit: AlgorithmLimit,
  hits: number,
  countAfter: number,
  nowMs: number,
): LimitOutcome {
  const { requestsPerUnit, windowSeconds } = limit;
  const over = countAfter > requestsPerUnit;
  const windowEndMs = windowStartMsOf(nowMs, windowSeconds) + windowSeconds * 1000;
  return {
    over,
    limit: requestsPerUnit,
    before: countAfter >= hits ? countAfter - hits : Number.MAX_SAFE_INTEGER,
    after: countAfter,
    remaining: over ? 0 : requestsPerUnit - countAfter,
    // The reference's `divider - now % divider` on whole seconds.
    resetSeconds: windowSeconds - (Math.floor(nowMs / 1000) % windowSeconds),
    overLimitCacheMs: over ? Math.ceil(windowEndMs - nowMs) - 1 : 0,
  };
}

/** `fixed_window`: one counter per epoch-aligned window of `unit × unit_multiplier`. */
export const fixedWindow: Algorithm<FixedOperation> = {
  usesBurst: false,
  plan: fixedWindowOperation,
  decide: (limit, hits, values, offset, plannedMs) =>
    fixedWindowOutcome(limit, hits, values[offset]!, plannedMs),
  wouldRefuse: (limit, _operation, hits, values, offset) => values[offset]! + hits > limit.requestsPerUnit,
  releaseOf: () => undefined,
  countersOf: (operation, values, offset) => [{ key: operation.key, value: values[offset]! }],
  resetWithoutCounts: (limit, nowSeconds) => secondsUntilReset(nowSeconds, limit.windowSeconds),
  capacityOf: (limit) => limit.requestsPerUnit,
  policyOf: (limit) => ({ quota: limit.requestsPerUnit, windowSeconds: limit.windowSeconds }),
};

/**
 * The reference's own fixed window: this module's fast path, for a rule with none of the extension fields
 * (docs/algorithms.md). The counter is {@link fixedWindow}'s with a window of one unit, and a
 * read is decided by {@link fixedWindow} alike; counting differs in what the reference does and the
 * extensions do not: the operation carries no `kind` (the shape every increment had before them), the
 * engine decides it with the reference's formulas (`statusFromCounter`) and the reset counted when the
 * store has answered, and the local over-limit cache keeps an over key for a whole window.
 */
export const referenceWindow = {
  /** `prefix + domain + "_" + Σ(key + "_" + value + "_") + windowStart`, byte for byte the reference's. */
  key(
    prefix: string,
    domain: string,
    entries: readonly DecisionEntry[],
    sharePatterns: readonly (string | undefined)[] | undefined,
    unit: UnitValue,
    nowSeconds: number,
  ): string {
    return cacheKeyFor(prefix, domain, entries, sharePatterns, windowStart(nowSeconds, unitSeconds(unit)));
  },
  /** INCRBY + EXPIRE of `key` for one window plus `jitterSeconds`. */
  operation(key: string, unit: UnitValue, hits: number, jitterSeconds: number): FixedOperation {
    return { key, hits, ttlSeconds: unitSeconds(unit) + jitterSeconds, perSecond: unit === UNIT_SECOND };
  },
  /** Seconds to the window's end at `nowSeconds` (when the store has answered): 1 … window. */
  resetSeconds(unit: UnitValue, nowSeconds: number): number {
    return secondsUntilReset(nowSeconds, unitSeconds(unit));
  },
  /** How long the local over-limit cache keeps an over key: the whole window, as the reference does. */
  overLimitCacheSeconds(unit: UnitValue): number {
    return unitSeconds(unit);
  },
};
