import { FailedAttemptLimiter } from "../auth/failed-attempt-limiter.js";
import { failedAttemptRules } from "../auth/failed-attempt-rules.js";
import { MemoryStore } from "../backends/memory/memory-store.js";
import { SharedMemoryStore } from "../backends/memory/shared-memory-store.js";
import { DecisionEngine } from "../engine/decision-engine.js";
import type { StatsRegistry } from "../observability/stats-registry.js";

/** Options of {@link createFailedAttemptLimiter}. */
export interface CreateFailedAttemptLimiterOptions {
  /** AUTH_FAILURES_PER_MINUTE: failed attempts an address may make per minute. */
  readonly failuresPerMinute: number;
  /** Receives the rule's `total_hits` and `over_limit` counters. */
  readonly stats: StatsRegistry;
  readonly nowMs?: () => number;
  /** WORKERS > 1 (docs/workers.md): a counter table every worker shares, so an address's budget is the process's. */
  readonly sharedTable?: SharedArrayBuffer | undefined;
}

/**
 * The login throttle of the users and migrations APIs: its fixed rule, a decision engine of its own
 * (no prefix, no jitter, no local cache) and counters kept in this process (a {@link MemoryStore}).
 */
export function createFailedAttemptLimiter(options: CreateFailedAttemptLimiterOptions): FailedAttemptLimiter {
  const nowMs = options.nowMs ?? Date.now;
  const engine = new DecisionEngine({
    nearLimitRatio: 0.8,
    cacheKeyPrefix: "",
    expirationJitterMaxSeconds: 0,
    shadowMode: false,
    quotaMode: false,
    responseHeaders: undefined,
    dynamicMetadata: false,
    localCache: undefined,
    stats: options.stats,
    random: Math.random,
  });
  const rules = failedAttemptRules(options.failuresPerMinute, options.stats);
  if (options.sharedTable !== undefined) {
    // Past windows' slots are taken again by new keys: nothing to sweep.
    const store = new SharedMemoryStore({ table: options.sharedTable, nowMs });
    return new FailedAttemptLimiter({ engine, rules, store, nowMs });
  }
  const store = new MemoryStore({ nowMs });
  // Sweeps the counters of past windows (an unref'd timer): one per address and minute otherwise stays.
  void store.start();
  return new FailedAttemptLimiter({ engine, rules, store, nowMs });
}
