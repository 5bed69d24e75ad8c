import type { SlidingOperation } from "../../engine/algorithms/counter-operation.js";
import type { CounterIncrement } from "../../engine/counter-store.js";
import type { Counter } from "../../engine/rule-set.js";
import type { NodeBreakers } from "../node-breakers.js";
import type { StoreGauge, StoreLog, StoreThrottledLog } from "../store-context.js";
import type { TlsFiles } from "../tls-files.js";
import type { StartupRetryOptions } from "./redis-startup.js";

/** `ratelimit.redis_pool.*` / `ratelimit.redis_per_second_pool.*`, the reference's connection-pool stats. */
export interface RedisPoolStats {
  /** Connections established (reconnections included). */
  readonly cxTotal: Counter;
  /** Connections closed by ratelimitd itself. */
  readonly cxLocalClose: Counter;
  /** Connections up right now. */
  readonly cxActive: StoreGauge;
}

/** One Redis deployment: how to reach it and how patient to be. */
export interface RedisEndpointOptions {
  readonly type: "single" | "sentinel" | "cluster";
  readonly socketType: "tcp" | "unix";
  readonly url: string;
  /** `password` or `user:password`. */
  readonly auth: string;
  readonly sentinelAuth: string;
  readonly tls: TlsFiles | undefined;
  /** Bound on connecting and on every round trip. */
  readonly timeoutMs: number;
}

/** One pool of connections to one Redis deployment. */
export interface RedisPoolOptions {
  /** How logs and errors name the deployment: `redis`, or `redis per-second` for REDIS_PERSECOND's. */
  readonly name: string;
  readonly endpoint: RedisEndpointOptions;
  /** REDIS_POOL_SIZE. */
  readonly size: number;
  /** REDIS_PIPELINE_WINDOW in ms; 0 = no wait: commands of one event-loop turn leave together. */
  readonly pipelineWindowMs: number;
  /** REDIS_PIPELINE_LIMIT in commands; 0 = window only. */
  readonly pipelineLimit: number;
  /** REDIS_CLUSTER_PIPELINE_PARALLELISM: 1 = slot groups one after another, 0 = pool size, capped at pool size. */
  readonly clusterParallelism: number;
  readonly stats: RedisPoolStats;
  readonly log: StoreLog;
  /** The daemon's rate-limited log, for the deployment's `connection lost` / `reconnected` lines. */
  readonly throttledLog: StoreThrottledLog;
  /** A cluster's circuit breakers, one per primary (docs/outages.md "Redis Cluster"); unused by other types. */
  readonly nodeBreakers?: NodeBreakers | undefined;
}

/** Requests one pool lets wait for Redis at once; beyond it, calls fail at once (docs/backends.md "Redis"). */
export const MAX_IN_FLIGHT = 10_000;

/**
 * One Redis deployment (a single Redis, a sentinel group, or a cluster) as the store uses it: counters in,
 * values out, failing with a `BackendError` whose message starts `redis <masked url>: ` (the log's) and
 * whose client message is `redis: <reason>` (no address). Logs losing its last connection and getting one
 * back, at warn.
 */
export interface RedisDeployment {
  /** The masked REDIS_URL, for logs and errors. */
  readonly label: string;
  /** Connections up right now. */
  readonly active: number;
  /** Called whenever the number of connections up changes. */
  onActiveChange(listener: (active: number) => void): void;
  /** Waits (with the start-up retry policy) until Redis answers PING, then opens the pool. */
  start(retry: StartupRetryOptions): Promise<void>;
  /**
   * Every operation's commands (fixed: INCRBY + EXPIRE; sliding: + GET previousKey; bucket: EVALSHA) in
   * one round trip; the flat values, `resultCountOf` per operation.
   */
  increment(increments: readonly CounterIncrement[]): Promise<number[]>;
  /** The operations' values without counting (GET per key, absent = 0; a bucket's script with 0 hits). */
  read(increments: readonly CounterIncrement[]): Promise<number[]>;
  /** `DECRBY key hits` (+ EXPIRE) per operation, in the background; a failure is only logged. */
  release(operations: readonly SlidingOperation[]): void;
  /** Lets what is in flight finish, then closes every connection. */
  close(): Promise<void>;
}
