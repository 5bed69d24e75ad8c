/**
 * The one interface every counter backend implements (memory, Redis, memcached); the engine owns it, as
 * the reference keeps its cache interface beside the limiter. It fits a pipelined Redis (INCRBY + EXPIRE
 * per key, one round trip per request), memcached (read, decide, increment asynchronously) and an
 * in-process map.
 */

import type { LimitAlgorithm } from "./algorithms/algorithm-limit.js";
import type { CounterOperation, SlidingOperation } from "./algorithms/counter-operation.js";

/**
 * One limit's work for a store (src/engine/algorithms/counter-operation.ts): a fixed window's increment —
 * the reference's `INCRBY key hits` + `EXPIRE key ttl`, whose operation may leave `kind` out — a sliding
 * window's increment and read of the previous window, or a token bucket's GCRA step. A store answers a
 * list of them with one flat list of numbers, `resultCountOf(operation)` per operation, in order.
 */
export type CounterIncrement = CounterOperation;

/** Health transitions reported by a store: one generic `backend` health component, whatever the store. */
export type HealthListener = (healthy: boolean) => void;

/** What a store can do beyond counting: the wiring asks these, never which backend it is. */
export interface StoreCapabilities {
  /**
   * `read` gives the current values without counting, so STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT can
   * apply. The memcached store says no: the reference ignores that setting there.
   */
  readonly readsWithoutCounting: boolean;
  /**
   * The algorithms the store can count (`rate_limit.algorithm`). A rule set asking for another is
   * refused as a whole; the memcached store counts fixed windows only.
   */
  readonly algorithms: readonly LimitAlgorithm[];
  /**
   * Keeps reservation holds (`reserve` operations, docs/token-budgets.md). A rule set with a reservation is
   * refused as a whole by a store that cannot; the memcached store cannot.
   */
  readonly reservations: boolean;
  /**
   * Counts in another process, so calls can fail or stall: the daemon puts it behind the circuit breaker
   * and BACKEND_MAX_PENDING (docs/outages.md). The memory store says no.
   */
  readonly remote: boolean;
}

/** The span traced around one `increment` call: the reference's name and attributes for that backend. */
export interface StoreSpanDescription {
  readonly name: string;
  readonly attributes: Readonly<Record<string, number>>;
}

export interface CounterStore {
  /** Short name for logs and errors: `memory`, `redis`, `memcache`. */
  readonly name: string;
  readonly capabilities: StoreCapabilities;
  /**
   * Applies every operation, in order, and gives their values as one flat list (a fixed window's counter
   * after the increment; see `resultCountOf`) — directly when the store can answer at once (memory), else
   * as a promise. Fails with a `BackendError` when the backend fails; never waits longer than the
   * backend's timeout. Operations of kinds outside `capabilities.algorithms` are never sent.
   */
  increment(increments: readonly CounterIncrement[]): number[] | Promise<number[]>;
  /**
   * The operations' current values without counting (`readOperation`'s shape; absent = 0), for
   * STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT; directly or as a promise.
   */
  read(increments: readonly CounterIncrement[]): number[] | Promise<number[]>;
  /**
   * Gives the hits of refused sliding-window requests back (`DECRBY key hits`), in the background: the
   * caller does not wait, and a failure is only counted and logged by the store.
   */
  release(operations: readonly SlidingOperation[]): void;
  /** The span for an `increment` of `increments`; only asked while tracing is on. */
  traceSpan(increments: readonly CounterIncrement[]): StoreSpanDescription;
  /** Connects (with the backend's retry policy); resolves once the first connection works. */
  start(): Promise<void>;
  /** Subscribes to health changes; the current state is reported at once. */
  onHealthChange(listener: HealthListener): void;
  /** Flushes pending work and closes connections. */
  close(): Promise<void>;
}
