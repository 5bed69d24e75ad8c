/**
 * A limit with a `reservation` (docs/token-budgets.md, spec §E7): its count U (a fixed window's, a sliding
 * window's estimate, or the tokens a token bucket has given out and not yet refilled) and its live holds R
 * decided together, from one atomic store step (reservation-step.ts). Not an algorithm of its own: a rule
 * with a reservation keeps its `fixed_window`, `sliding_window` or `token_bucket`, and is planned and decided
 * by this module. A bucket's L is its capacity (`burst`, by default requests_per_unit).
 */
import { UNIT_SECOND } from "../units.js";
import type { Algorithm } from "./algorithm.js";
import type { AlgorithmLimit, Reservation } from "./algorithm-limit.js";
import type { ReserveOperation } from "./counter-operation.js";
import { fixedWindow } from "./fixed-window.js";
import type { LimitOutcome } from "./limit-outcome.js";
import { tokenBucket } from "./token-bucket.js";

/**
 * Key of a limit's reservation record: `base + "resv" + windowSeconds`, then `_l<i>` for limit index
 * i ≥ 1. It ends in letters and digits after the last `_`, never in `_` + digits as a reference key does,
 * and a change of window starts a fresh record.
 */
export function reservationKeyFor(baseKey: string, windowSeconds: number, limitIndex: number): string {
  const key = `${baseKey}resv${windowSeconds}`;
  return limitIndex > 0 ? `${key}_l${limitIndex}` : key;
}

/**
 * Key of a token bucket's reservation record: `base + "resvgcra" + windowSeconds`, then `_l<i>` as above.
 * Its record is not a window's, so a change between a window and a bucket starts a fresh one.
 */
export function bucketReservationKeyFor(baseKey: string, windowSeconds: number, limitIndex: number): string {
  const key = `${baseKey}resvgcra${windowSeconds}`;
  return limitIndex > 0 ? `${key}_l${limitIndex}` : key;
}

/** The store step of one limit: a check when the request's hits are 0, else a charge of them. */
export function reservationOperation(
  limit: AlgorithmLimit,
  reservation: Reservation,
  baseKey: string,
  limitIndex: number,
  hits: number,
  requestId: string,
  jitterSeconds: number,
): ReserveOperation {
  const bucket = limit.algorithm === "token_bucket";
  return {
    kind: "reserve",
    key: (bucket ? bucketReservationKeyFor : reservationKeyFor)(baseKey, limit.windowSeconds, limitIndex),
    hits,
    charge: hits > 0,
    limit: bucket ? limit.burst : limit.requestsPerUnit,
    estimate: reservation.estimate,
    holdTtlMs: reservation.ttlSeconds * 1000,
    windowSeconds: limit.windowSeconds,
    sliding: limit.algorithm === "sliding_window",
    bucket,
    refill: bucket ? limit.requestsPerUnit : 0,
    requestId,
    jitterSeconds,
    perSecond: limit.unit === UNIT_SECOND,
  };
}

/**
 * The decision from the step's `[ok, U, R, holds, msToWindowEnd, heldOrReleased]`, in counter terms with
 * the count U + R: a check's `before` is U + R before its hold and `after` the same with it (with the
 * estimate it asked for when refused); a charge's are U + R before and after it. Remaining = L − U − R
 * after the call when OK. The local cache may keep the key only while U alone is over: a refusal that
 * holds caused can end with any settlement (and a bucket's U falls with its next token: never kept).
 */
export function reservationOutcome(
  operation: Pick<ReserveOperation, "charge" | "hits" | "estimate" | "limit" | "sliding" | "bucket">,
  values: ArrayLike<number>,
  offset: number,
): LimitOutcome {
  const ok = values[offset]! === 1;
  const used = values[offset + 1]!;
  const held = values[offset + 2]!;
  const resetMs = values[offset + 4]!;
  const changed = values[offset + 5]!;
  const limit = operation.limit;
  const now = used + held;
  let before: number;
  let after: number;
  if (operation.charge) {
    before = used - operation.hits + held + changed;
    after = now;
  } else {
    before = now - changed;
    after = ok ? now : now + operation.estimate;
  }
  const resetSeconds = Math.max(1, Math.ceil(resetMs / 1000));
  if (ok) {
    return {
      over: false,
      limit,
      before,
      after,
      remaining: Math.max(0, limit - now),
      resetSeconds,
      overLimitCacheMs: 0,
    };
  }
  return {
    over: true,
    limit,
    before,
    // An outcome that is over is always above the limit (a settled hold can leave U + R at it).
    after: Math.max(after, limit + 1),
    remaining: 0,
    resetSeconds,
    // A sliding window's U decays as it slides, a bucket's refills: never certainly over until a window's end.
    overLimitCacheMs:
      used >= limit && !operation.charge && !operation.sliding && !operation.bucket
        ? Math.max(0, resetMs - 1)
        : 0,
  };
}

/**
 * What a step would answer, from a read's `[ownHoldLive, U, R, holds, msToWindowEnd, 0]`: for
 * STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT and `POST /explain`, which count nothing.
 */
export function reservationIfCounted(
  operation: ReserveOperation,
  read: ArrayLike<number>,
  offset: number,
): number[] {
  const own = read[offset]! === 1;
  const used = read[offset + 1]!;
  const held = read[offset + 2]!;
  const holds = read[offset + 3]!;
  const resetMs = read[offset + 4]!;
  const { limit, estimate } = operation;
  if (!operation.charge) {
    if (own) return [used + held <= limit ? 1 : 0, used, held, holds, resetMs, 0];
    const fits = used + held + estimate <= limit;
    return fits
      ? [1, used, held + estimate, holds + 1, resetMs, estimate]
      : [0, used, held, holds, resetMs, 0];
  }
  // A charge settles the request's own hold, else the oldest (which a read cannot tell apart: all holds of
  // a limit are its estimate unless the rules changed).
  const settles = operation.requestId === "" ? holds > 0 : own;
  const released = settles && holds > 0 ? held / holds : 0;
  const afterUsed = used + operation.hits;
  const afterHeld = held - released;
  return [
    afterUsed + afterHeld <= limit ? 1 : 0,
    afterUsed,
    afterHeld,
    holds - (settles ? 1 : 0),
    resetMs,
    released,
  ];
}

/** The `reserve` operation decided as an {@link Algorithm}: what plan-limits.ts places for such a limit. */
export const reservedWindow: Algorithm<ReserveOperation> = {
  usesBurst: false,
  // Planned by reservationOperation, which needs the request's id; never through this entry.
  plan: () => undefined,
  decide: (limit, hits, values, offset) =>
    reservationOutcome(
      {
        charge: hits > 0,
        hits,
        estimate: limit.reservation?.estimate ?? 0,
        limit: limit.algorithm === "token_bucket" ? limit.burst : limit.requestsPerUnit,
        sliding: limit.algorithm === "sliding_window",
        bucket: limit.algorithm === "token_bucket",
      },
      values,
      offset,
    ),
  wouldRefuse: (_limit, operation, _hits, values, offset) =>
    reservationIfCounted(operation, values, offset)[0] === 0,
  releaseOf: () => undefined,
  countersOf: (operation, values, offset) => [{ key: operation.key, value: values[offset + 1]! }],
  resetWithoutCounts: (limit, nowSeconds) => shapeOf(limit).resetWithoutCounts(limit, nowSeconds),
  capacityOf: (limit) => shapeOf(limit).capacityOf(limit),
  policyOf: (limit) => shapeOf(limit).policyOf(limit),
};

/** The algorithm whose figures (capacity, policy, reset) a reserved limit states: a bucket's, else a window's. */
function shapeOf(
  limit: AlgorithmLimit,
): Pick<Algorithm<never>, "resetWithoutCounts" | "capacityOf" | "policyOf"> {
  return limit.algorithm === "token_bucket" ? tokenBucket : fixedWindow;
}
