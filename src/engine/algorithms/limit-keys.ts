/**
 * Counter keys of every algorithm. The reference's key is `base + windowStart`; every other key is told
 * apart by a suffix that cannot end a reference key (those always end in `_` + digits): `_x<N>` for a
 * window of N units, `_l<i>` for the i-th (0-based, i ≥ 1) limit of a `rate_limits` list, and `gcra<T>`
 * for a token bucket, whose key carries its emission interval so a change of rate or window starts a
 * fresh bucket instead of misreading the old one.
 */
import type { DecisionEntry } from "../decision-request.js";

/**
 * The key without its window: `prefix + domain + "_" + Σ(key + "_" + value + "_")`, byte-identical to the
 * reference's (src/engine/cache-key.ts). A share_threshold pattern replaces the value at its index.
 */
export function baseKeyFor(
  prefix: string,
  domain: string,
  entries: readonly DecisionEntry[],
  sharePatterns: readonly (string | undefined)[] | undefined,
): string {
  let key = `${prefix}${domain}_`;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    key += `${entry.key}_${sharePatterns?.[i] ?? entry.value}_`;
  }
  return key;
}

/**
 * Key of a fixed or sliding window's counter: `base + windowStartSeconds`, then `_x<N>` when the window
 * is N > 1 units long, then `_l<i>` for limit index i ≥ 1. The first limit of a window of one unit keeps
 * the reference's key, so fixed and sliding windows share counts with it and with each other.
 */
export function windowKeyFor(
  baseKey: string,
  windowStartSeconds: number,
  unitMultiplier: number,
  limitIndex: number,
): string {
  let key = baseKey + windowStartSeconds;
  if (unitMultiplier > 1) key += `_x${unitMultiplier}`;
  if (limitIndex > 0) key += `_l${limitIndex}`;
  return key;
}

/** Key of a token bucket: `base + "gcra" + String(emissionIntervalUs)`, then `_l<i>` for limit index i ≥ 1. */
export function bucketKeyFor(baseKey: string, emissionIntervalUs: number, limitIndex: number): string {
  const key = `${baseKey}gcra${String(emissionIntervalUs)}`;
  return limitIndex > 0 ? `${key}_l${limitIndex}` : key;
}
