import type { DecisionEntry } from "./decision-request.js";

/**
 * The counter key, byte-identical to the reference so both can share a Redis:
 * `prefix + domain + "_" + Σ(key + "_" + value + "_") + windowStart`. A share_threshold pattern replaces
 * the request value at its index, so every matching value shares one counter.
 */
export function cacheKeyFor(
  prefix: string,
  domain: string,
  entries: readonly DecisionEntry[],
  sharePatterns: readonly (string | undefined)[] | undefined,
  windowStartSeconds: number,
): string {
  let key = `${prefix}${domain}_`;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    key += `${entry.key}_${sharePatterns?.[i] ?? entry.value}_`;
  }
  return key + windowStartSeconds;
}

/** Start of the fixed window containing `nowSeconds`, aligned to the Unix epoch. */
export function windowStart(nowSeconds: number, unitSeconds: number): number {
  return Math.floor(nowSeconds / unitSeconds) * unitSeconds;
}

/** Seconds until the window containing `nowSeconds` ends: 1 … unitSeconds, never 0. */
export function secondsUntilReset(nowSeconds: number, unitSeconds: number): number {
  return unitSeconds - (Math.floor(nowSeconds) % unitSeconds);
}
