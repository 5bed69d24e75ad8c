/**
 * One limit's decision in counter terms, whatever its algorithm. `limit`, `before` and `after` feed the
 * reference's status and stats formulas unchanged (src/engine/descriptor-status.ts: OVER when after >
 * limit, near-limit from the threshold of `limit`, remaining = limit − after).
 */
export interface LimitOutcome {
  /** The request's hits do not fit (before any shadow mode). Always `after > limit`. */
  readonly over: boolean;
  /** The counter-equivalent limit: requests_per_unit, or the burst of a token bucket. */
  readonly limit: number;
  /**
   * The counter-equivalent value before this request's hits. A fixed window whose counter is below the
   * hits (an increment suppressed) reports Number.MAX_SAFE_INTEGER, as the reference's uint64 does.
   */
  readonly before: number;
  /** `before + hits` (for a fixed window, the counter after the increment, whatever `before` says). */
  readonly after: number;
  /** `limit − after` when it fits, else 0 (`limit_remaining`). */
  readonly remaining: number;
  /**
   * `duration_until_reset` in whole seconds, ≥ 1: when over, the time after which the same request would
   * fit if nothing else arrived; else the time until the limit is fully available again.
   */
  readonly resetSeconds: number;
  /**
   * How long the local over-limit cache may remember the key as over, in whole milliseconds from the
   * moment the outcome describes (0 = do not remember it): the largest d such that a request of one hit
   * would still be refused d ms later if nothing else arrived. A caller that learns the outcome later
   * than that moment (a Redis round trip for a token bucket, whose clock is Redis's) subtracts the delay.
   */
  readonly overLimitCacheMs: number;
}
