import type { AlgorithmLimit } from "./algorithm-limit.js";
import type { CounterOperation, SlidingOperation } from "./counter-operation.js";
import type { LimitOutcome } from "./limit-outcome.js";

/** One counter a limit reads, with its value (`POST /explain`). */
export interface ExplainedCounter {
  readonly key: string;
  readonly value: number;
}

/** A limit's policy as the IETF `RateLimit-Policy` field states it: quota `q` over window `w` seconds. */
export interface LimitPolicy {
  readonly quota: number;
  readonly windowSeconds: number;
}

/**
 * One `rate_limit.algorithm`: how a limit plans its counter-store operation and how it decides from the
 * values the store answers. Each algorithm is one module of src/engine/algorithms/ registered by name in
 * registry.ts; the engine calls nothing algorithm-specific but these. `Operation` is the kind of store
 * operation it plans (src/engine/algorithms/counter-operation.ts), which every store runs.
 */
export interface Algorithm<Operation extends CounterOperation = CounterOperation> {
  /** Whether the limit has a `burst` (shown by `POST /explain`). */
  readonly usesBurst: boolean;
  /**
   * The store operation for one limit at `nowMs`: `baseKey` from `baseKeyFor`, `limitIndex` its 0-based
   * place in `rate_limits` (0 for `rate_limit`), `jitterSeconds` the extra TTL drawn for this key
   * (EXPIRATION_JITTER_MAX_SECONDS). Undefined when the limit is decided without the store; `decide` then
   * gets no values.
   */
  plan(
    limit: AlgorithmLimit,
    baseKey: string,
    limitIndex: number,
    hits: number,
    nowMs: number,
    jitterSeconds: number,
  ): Operation | undefined;
  /**
   * The outcome from the store's answer to the planned operation: its values start at `values[offset]`
   * (`resultCountOf(operation)` of them). `plannedMs` is the clock reading the operation was planned with.
   * The outcome also says how long the local over-limit cache may keep the key (`overLimitCacheMs`).
   */
  decide(
    limit: AlgorithmLimit,
    hits: number,
    values: ArrayLike<number>,
    offset: number,
    plannedMs: number,
  ): LimitOutcome;
  /**
   * STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: whether `hits` would be refused, from the store's read of
   * `operation` (`read`'s values at `values[offset]`) at `nowMs`.
   */
  wouldRefuse(
    limit: AlgorithmLimit,
    operation: Operation,
    hits: number,
    values: ArrayLike<number>,
    offset: number,
    nowMs: number,
  ): boolean;
  /**
   * What the store gives back when the request is refused (`CounterStore.release`, in the background):
   * the operation as it was sent, or undefined when a refusal costs nothing.
   */
  releaseOf(sent: Operation): SlidingOperation | undefined;
  /** The counters `operation` reads, with their values from the store's read at `values[offset]`. */
  countersOf(operation: Operation, values: ArrayLike<number>, offset: number): ExplainedCounter[];
  /**
   * `duration_until_reset` when the store could not be asked (BACKEND_FAILURE_MODE allow or deny), at
   * `nowSeconds`.
   */
  resetWithoutCounts(limit: AlgorithmLimit, nowSeconds: number): number;
  /** The counter-equivalent limit its outcomes count against (`LimitOutcome.limit`): RateLimit-Limit. */
  capacityOf(limit: AlgorithmLimit): number;
  /** Its IETF policy: the quota `r` counts down from, over the window in seconds. */
  policyOf(limit: AlgorithmLimit): LimitPolicy;
}
