import { UNIT_SECOND } from "../units.js";
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
