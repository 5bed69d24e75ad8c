/**
 * The local over-limit cache as the engine sees it. Entries are keyed on cache key *and* limit, so a
 * request carrying a higher override for the same descriptor is not blocked by a lower one
 * (test/unit/engine/local-cache-over-limit.test.ts).
 */
export interface OverLimitCache {
  isOverLimit(cacheKey: string, requestsPerUnit: number): boolean;
  /** Remembers the key as over its limit for `ttlSeconds` (fractions of a second allowed). */
  markOverLimit(cacheKey: string, requestsPerUnit: number, ttlSeconds: number): void;
  /** Milliseconds the key is still remembered as over (0 when it is not). */
  remainingMs?(cacheKey: string, requestsPerUnit: number): number;
  /** `isOverLimit` without counting a hit or a miss or changing anything (`POST /explain`). */
  peek?(cacheKey: string, requestsPerUnit: number): boolean;
}
