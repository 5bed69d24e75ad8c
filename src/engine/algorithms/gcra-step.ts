/**
 * One GCRA (generic cell rate algorithm) step: the token bucket's arithmetic, shared by the in-process
 * store and, line for line, by the Redis script (src/backends/redis/token-bucket-script.ts), so that both
 * answer the same doubles for the same inputs.
 *
 * The stored value is the theoretical arrival time (TAT) in microseconds, split into a whole part and a
 * fraction in [0, 1). A single double cannot hold it: near 1.7 × 10¹⁵ µs its resolution is 0.25 µs, so
 * adding an emission interval such as 10⁶/3 µs rounds on every request and a burst sent at once could be
 * refused its last, exactly fitting, token. Whole parts add exactly (integers below 2⁵³ µs, year 2255) and
 * the fractions carry, so the only rounding left is relative to the bucket's own size, well inside the
 * tolerance below.
 */

/** A stored theoretical arrival time: `wholeUs + fractionUs` microseconds since the epoch. */
export interface BucketTat {
  /** An integer. */
  readonly wholeUs: number;
  /** In [0, 1). */
  readonly fractionUs: number;
}

/** What one step decided and what to store. */
export interface GcraStepResult {
  readonly allowed: boolean;
  /** TAT − now after the request when allowed, before it when refused: ≥ 0. */
  readonly debtUs: number;
  /** The TAT to store (allowed with hits > 0), else undefined: store nothing. */
  readonly tat: BucketTat | undefined;
  /** Time to live of the stored TAT, whole ms (0 when nothing is stored); see {@link gcraStep}. */
  readonly ttlMs: number;
}

/**
 * A request fits when its debt is within `burst × T + T × TOKEN_TOLERANCE`: a billionth of a token, so
 * that rounding never refuses an exact fit.
 */
export const TOKEN_TOLERANCE = 1e-9;

/**
 * Takes `hits` tokens from the bucket whose TAT is `stored` (undefined when absent), at `nowUs` (whole
 * microseconds, as Redis `TIME` gives them): tat = max(stored, now); newTat = tat + hits × T; allowed iff
 * newTat − now ≤ burst × T (+ tolerance). A refused request, and one of 0 hits, stores nothing. The TAT
 * lives `ceil(debt / 1000) + 1` ms: it vanishes once the bucket is full again, the spare millisecond
 * covering Redis's millisecond expiry clock against TIME's microseconds (a TAT read after it has passed
 * counts as now, so living longer changes nothing).
 */
export function gcraStep(
  stored: BucketTat | undefined,
  nowUs: number,
  hits: number,
  emissionIntervalUs: number,
  burst: number,
): GcraStepResult {
  let whole = nowUs;
  let fraction = 0;
  if (
    stored !== undefined &&
    (stored.wholeUs > nowUs || (stored.wholeUs === nowUs && stored.fractionUs > 0))
  ) {
    whole = stored.wholeUs;
    fraction = stored.fractionUs;
  }
  const step = hits * emissionIntervalUs;
  const stepWhole = Math.floor(step);
  let newWhole = whole + stepWhole;
  let newFraction = fraction + (step - stepWhole);
  if (newFraction >= 1) {
    newFraction = newFraction - 1;
    newWhole = newWhole + 1;
  }
  const debtAfter = newWhole - nowUs + newFraction;
  if (debtAfter <= burst * emissionIntervalUs + emissionIntervalUs * TOKEN_TOLERANCE) {
    return {
      allowed: true,
      debtUs: debtAfter,
      tat: hits > 0 ? { wholeUs: newWhole, fractionUs: newFraction } : undefined,
      ttlMs: hits > 0 ? Math.ceil(debtAfter / 1000) + 1 : 0,
    };
  }
  return { allowed: false, debtUs: whole - nowUs + fraction, tat: undefined, ttlMs: 0 };
}
