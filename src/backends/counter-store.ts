/**
 * The one interface every counter backend implements (memory, Redis, memcached). It fits a pipelined
 * Redis (INCRBY + EXPIRE per key, one round trip per request), memcached (read, decide, increment
 * asynchronously) and an in-process map.
 */

/** Add `hits` to the counter `key`, which lives `ttlSeconds` (refreshed on every hit where supported). */
export interface CounterIncrement {
  readonly key: string;
  readonly hits: number;
  readonly ttlSeconds: number;
  /** The limit's unit is SECOND: routed to the per-second Redis when `REDIS_PERSECOND` is on. */
  readonly perSecond: boolean;
}

/** Health transitions reported by a store (decision 3: one generic backend health component). */
export type HealthListener = (healthy: boolean) => void;

export interface CounterStore {
  /** Short name for logs and errors: `memory`, `redis`, `memcache`. */
  readonly name: string;
  /**
   * Applies every increment and gives each counter's value after it, in order — directly when the store
   * can answer at once (memory), else as a promise. Fails with a `BackendError` when the backend fails;
   * never waits longer than the backend's timeout.
   */
  increment(increments: readonly CounterIncrement[]): number[] | Promise<number[]>;
  /** Current values (0 when absent), for STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT; directly or as a promise. */
  read(increments: readonly CounterIncrement[]): number[] | Promise<number[]>;
  /** Connects (with the backend's retry policy); resolves once the first connection works. */
  start(): Promise<void>;
  /** Subscribes to health changes; the current state is reported at once. */
  onHealthChange(listener: HealthListener): void;
  /** Flushes pending work and closes connections. */
  close(): Promise<void>;
}
