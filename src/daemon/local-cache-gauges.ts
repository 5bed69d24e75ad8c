import { LocalOverLimitCache } from "../backends/local-over-limit-cache.js";
import type { StatsRegistry } from "../observability/stats-registry.js";

const COUNTS = [
  "entryCount",
  "hitCount",
  "missCount",
  "lookupCount",
  "evacuateCount",
  "expiredCount",
  "overwriteCount",
] as const;

/** The local over-limit cache (LOCAL_CACHE_SIZE_IN_BYTES) with its `ratelimit.localcache.*` gauges. */
export function localCacheWithGauges(sizeBytes: number, stats: StatsRegistry): LocalOverLimitCache {
  const cache = new LocalOverLimitCache(sizeBytes);
  const counts = () => cache.counts();
  for (const name of COUNTS) {
    stats.gauge(`ratelimit.localcache.${name}`, undefined, () => counts()[name]);
  }
  return cache;
}
