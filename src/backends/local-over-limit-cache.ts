import { LRUCache } from "lru-cache";
import type { OverLimitCache } from "../engine/over-limit-cache.js";

/** Sizes below this are raised to it, as freecache (the reference's cache) does. */
const MIN_SIZE_BYTES = 512 * 1024;
/** Approximate bookkeeping cost of one entry beyond its key. */
const ENTRY_OVERHEAD_BYTES = 48;

/** Counts exposed as the reference's `ratelimit.localcache.*` gauges. */
export interface LocalCacheCounts {
  readonly entryCount: number;
  readonly hitCount: number;
  readonly missCount: number;
  readonly lookupCount: number;
  readonly evacuateCount: number;
  readonly expiredCount: number;
  readonly overwriteCount: number;
}

/**
 * The local over-limit cache (`LOCAL_CACHE_SIZE_IN_BYTES`): remembers cache keys known to be over their
 * limit until their window ends, so those requests skip the backend. Bounded by bytes (keys are charged
 * their UTF-16 size plus overhead); an entry larger than 1/1024 of the cache is not stored, as freecache.
 * Keyed on cache key + limit (see `OverLimitCache`; test/unit/engine/local-cache-over-limit.test.ts).
 */
export class LocalOverLimitCache implements OverLimitCache {
  readonly #cache: LRUCache<string, true>;
  #hits = 0;
  #misses = 0;
  #evictions = 0;
  #expirations = 0;
  #overwrites = 0;
  /** Entries refused for their size (the reference logs `Failing to set local cache key`). */
  rejected = 0;

  constructor(sizeBytes: number) {
    const maxSize = Math.max(sizeBytes, MIN_SIZE_BYTES);
    this.#cache = new LRUCache<string, true>({
      maxSize,
      maxEntrySize: Math.floor(maxSize / 1024),
      sizeCalculation: (_value, key) => key.length * 2 + ENTRY_OVERHEAD_BYTES,
      dispose: (_value, _key, reason) => {
        if (reason === "evict") this.#evictions++;
        else if (reason === "expire") this.#expirations++;
        else if (reason === "set") this.#overwrites++;
      },
    });
  }

  isOverLimit(cacheKey: string, requestsPerUnit: number): boolean {
    const hit = this.#cache.get(`${requestsPerUnit}:${cacheKey}`) !== undefined;
    if (hit) this.#hits++;
    else this.#misses++;
    return hit;
  }

  peek(cacheKey: string, requestsPerUnit: number): boolean {
    // `has` neither counts nor moves the entry's recency; a stale entry is not over.
    return this.#cache.has(`${requestsPerUnit}:${cacheKey}`);
  }

  markOverLimit(cacheKey: string, requestsPerUnit: number, ttlSeconds: number): void {
    const key = `${requestsPerUnit}:${cacheKey}`;
    this.#cache.set(key, true, { ttl: ttlSeconds * 1000 });
    if (!this.#cache.has(key)) this.rejected++;
  }

  remainingMs(cacheKey: string, requestsPerUnit: number): number {
    return Math.max(0, this.#cache.getRemainingTTL(`${requestsPerUnit}:${cacheKey}`));
  }

  counts(): LocalCacheCounts {
    return {
      entryCount: this.#cache.size,
      hitCount: this.#hits,
      missCount: this.#misses,
      lookupCount: this.#hits + this.#misses,
      evacuateCount: this.#evictions,
      expiredCount: this.#expirations,
      overwriteCount: this.#overwrites,
    };
  }
}
