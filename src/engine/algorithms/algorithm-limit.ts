import type { UnitValue } from "../units.js";

/**
 * `rate_limit.algorithm`: how a limit turns stored values into a decision. Each name has its module in
 * registry.ts, which the compiler holds to this list both ways.
 */
export type LimitAlgorithm = "fixed_window" | "sliding_window" | "token_bucket";

/**
 * The parts of a limit the algorithms read. A configured limit and a request-level override both carry
 * them; everything here is fixed when the rules are loaded.
 */
export interface AlgorithmLimit {
  readonly algorithm: LimitAlgorithm;
  /** Requests per window; for a token bucket, the tokens refilled evenly over one window. */
  readonly requestsPerUnit: number;
  /** The configured unit; a limit whose unit is SECOND goes to the per-second Redis (REDIS_PERSECOND). */
  readonly unit: UnitValue;
  /** `unit_multiplier`: the window is this many units long (integer ≥ 1, default 1). */
  readonly unitMultiplier: number;
  /** unitSeconds(unit) × unitMultiplier, see {@link windowSecondsFor}. */
  readonly windowSeconds: number;
  /** Token bucket only: the tokens the bucket holds when full (default requestsPerUnit). */
  readonly burst: number;
  /** `reservation`, for a fixed window (src/engine/algorithms/reservation.ts); absent without one. */
  readonly reservation?: Reservation | undefined;
}

/**
 * A limit's `reservation`: a check (hits 0) that fits holds `estimate` units for `ttlSeconds`, and a charge
 * (hits N > 0) counts N and settles one hold (docs/token-budgets.md).
 */
export interface Reservation {
  /** Units held per admitted check (integer ≥ 1, at most the limit). */
  readonly estimate: number;
  /** How long an unsettled hold lives, in whole seconds (1 … 86400). */
  readonly ttlSeconds: number;
  /** The descriptor entry whose value names the request, taken out before matching; absent: none. */
  readonly requestIdKey?: string;
}

/** Window length in seconds of `unitMultiplier` units of `unitSeconds` seconds each. */
export function windowSecondsFor(unitSeconds: number, unitMultiplier: number): number {
  return unitSeconds * unitMultiplier;
}

/**
 * GCRA's emission interval T: microseconds between two tokens, `windowSeconds × 10⁶ / requestsPerUnit`
 * as a double (not rounded: the Redis script receives it as JS `String()`, which reads back exactly).
 * Infinity for a rate of 0, which a token bucket decides without the store.
 */
export function emissionIntervalUsOf(
  limit: Pick<AlgorithmLimit, "windowSeconds" | "requestsPerUnit">,
): number {
  return (limit.windowSeconds * 1_000_000) / limit.requestsPerUnit;
}

/**
 * Start of the epoch-aligned window containing `nowMs`, in milliseconds: `floor(now / window) × window`.
 * With a multiplier of 1 this is the reference's window start (× 1000).
 */
export function windowStartMsOf(nowMs: number, windowSeconds: number): number {
  const windowMs = windowSeconds * 1000;
  return Math.floor(nowMs / windowMs) * windowMs;
}
