/**
 * What `DecisionEngine.plan` decides before the counter store is asked, and what `complete` reads after:
 * per descriptor the limits it is checked against, and one list of the store operations they planned.
 */
import type { Algorithm } from "./algorithms/algorithm.js";
import type { AlgorithmLimit } from "./algorithms/algorithm-limit.js";
import type { CounterOperation, SlidingOperation } from "./algorithms/counter-operation.js";
import type { CounterIncrement } from "./counter-store.js";
import type { DecisionRequest } from "./decision-request.js";
import type { RateLimitRule, RuleStats } from "./rule-set.js";

/** One limit of a descriptor as planned: the algorithm deciding it, its store operation and its values. */
export interface PlannedLimit {
  readonly rule: RateLimitRule;
  readonly limit: AlgorithmLimit;
  readonly algorithm: Algorithm;
  /** Undefined when the algorithm decides without the store (a token bucket with a rate of 0). */
  readonly operation: CounterOperation | undefined;
  /**
   * Its place in the plan's `operations` and `increments`; -1 without an operation. The increment sent may
   * differ from `operation`: STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT replaces it with one of 0 hits.
   */
  readonly index: number;
  /** Where its values start in the store's flat answer (`resultCountOf` of them); -1 without an operation. */
  readonly offset: number;
}

/** A limited descriptor: what it is checked against and how. */
export interface ActiveLimit {
  /** The limit its status reports by default: the rule matched, or the first of its `rate_limits`. */
  readonly rule: RateLimitRule;
  readonly stats: RuleStats;
  readonly hits: number;
  /**
   * A rule without the extensions (docs/algorithms.md): the reference's fixed window, decided
   * with the reference's formulas (src/engine/algorithms/fixed-window.ts, `referenceWindow`).
   */
  readonly reference: boolean;
  /** Its limits, one per `rate_limits` entry (one for `rate_limit`); empty for a local-cache hit. */
  readonly limits: readonly PlannedLimit[];
  readonly localCacheHit: boolean;
  /** The first limit's counter key; for a local-cache hit, the key the cache holds as over. */
  readonly cacheKey: string;
  /** Extensions, local-cache hit: how long the cache still holds the key, for the reset. */
  readonly cacheRemainingMs?: number;
}

/** Everything decided before the backend is consulted. */
export interface DecisionPlan {
  readonly request: DecisionRequest;
  /** Per descriptor; undefined for unmatched, replaced and unlimited descriptors. */
  readonly active: readonly (ActiveLimit | undefined)[];
  readonly unlimited: readonly boolean[];
  /** Every planned limit with a store operation, in the order the store is asked. */
  readonly operations: readonly PlannedLimit[];
  /**
   * What the store is asked (`CounterStore.increment` and `read`): `operations[i].operation` for each i,
   * or the same with 0 hits once STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT suppressed it.
   */
  readonly increments: CounterIncrement[];
  /** Whether any active descriptor was answered by the local over-limit cache. */
  readonly anyLocalCacheHit: boolean;
  /** The clock reading the plan was made with, in ms (the algorithms' windows are planned from it). */
  readonly nowMs: number;
  /** Operations of refused requests `complete` found to give back (`CounterStore.release`). */
  readonly releases: SlidingOperation[];
}
