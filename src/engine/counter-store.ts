/**
 * The one interface every counter backend implements (memory, Redis, memcached); the engine owns it, as
 * the reference keeps its cache interface beside the limiter. It fits a pipelined Redis (INCRBY + EXPIRE
 * per key, one round trip per request), memcached (read, decide, increment asynchronously) and an
 * in-process map.
 */

/** Add `hits` to the counter `key`, which lives `ttlSeconds` (refreshed on every hit where supported). */
export interface CounterIncrement {
  readonly key: string;
  readonly hits: number;
  readonly ttlSeconds: number;
  /** The limit's unit is SECOND: routed to the per-second Redis when `REDIS_PERSECOND` is on. */
  readonly perSecond: boolean;
}

/** Health transitions reported by a store: one generic `backend` health component, whatever the store. */
export type HealthListener = (healthy: boolean) => void;

/** What a store can do beyond counting: the wiring asks these, never which backend it is. */
export interface StoreCapabilities {
  /**
   * `read` gives the current values without counting, so STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT can
   * apply. The memcached store says no: the reference ignores that setting there.
   */
  readonly readsWithoutCounting: boolean;
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
   * Applies every increment and gives each counter's value after it, in order — directly when the store
   * can answer at once (memory), else as a promise. Fails with a `BackendError` when the backend fails;
   * never waits longer than the backend's timeout.
   */
  increment(increments: readonly CounterIncrement[]): number[] | Promise<number[]>;
  /** Current values (0 when absent), for STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT; directly or as a promise. */
  read(increments: readonly CounterIncrement[]): number[] | Promise<number[]>;
  /** The span for an `increment` of `increments`; only asked while tracing is on. */
  traceSpan(increments: readonly CounterIncrement[]): StoreSpanDescription;
  /** Connects (with the backend's retry policy); resolves once the first connection works. */
  start(): Promise<void>;
  /** Subscribes to health changes; the current state is reported at once. */
  onHealthChange(listener: HealthListener): void;
  /** Flushes pending work and closes connections. */
  close(): Promise<void>;
}
