import { getHeapStatistics } from "node:v8";
import { SettingsError } from "../errors.js";
import type { Logger } from "../observability/logger.js";
import type { StatsRegistry } from "../observability/stats-registry.js";
import type { ThrottledLog } from "../observability/throttled-log.js";
import type { Settings } from "../settings/load-settings.js";
import type { CounterStore } from "./counter-store.js";
import { memcachedEndpoints } from "./memcached/memcached-address.js";
import { MemcachedStore } from "./memcached/memcached-store.js";
import { MemoryStore } from "./memory/memory-store.js";
import type { RedisPoolOptions } from "./redis/redis-deployment.js";
import { RedisStore } from "./redis/redis-store.js";
import { type TlsFiles, tlsOptionsFromFiles } from "./tls-files.js";

/** What stores may report into. */
export interface StoreContext {
  readonly stats: StatsRegistry;
  readonly logger: Logger;
  /** Rate-limited lines: per-request errors, connections lost and back. */
  readonly throttledLog: ThrottledLog;
}

/** The one place a backend is chosen from BACKEND_TYPE and given its narrow options. */
export function createCounterStore(settings: Settings, context: StoreContext): CounterStore {
  switch (settings.backend) {
    case "memory":
      return memoryStore(settings, context);
    case "redis":
      return new RedisStore({
        main: mainPool(settings, context),
        perSecond: settings.redisPerSecond ? perSecondPool(settings, context) : undefined,
        startup: {
          initialIntervalMs: settings.redisStartupInitialIntervalMs,
          maxIntervalMs: settings.redisStartupMaxIntervalMs,
          maxElapsedMs: settings.redisStartupMaxElapsedTimeMs,
        },
        healthCheckActiveConnection: settings.redisHealthCheckActiveConnection,
      });
    case "memcache":
      return memcachedStore(settings, context);
  }
}

/**
 * The memory store with its byte budget, `ratelimit.memory.evictions` and gauges of what it holds. A budget
 * V8's heap could not hold beside everything else is warned about at start-up.
 */
function memoryStore(s: Settings, { stats, logger }: StoreContext): MemoryStore {
  const heapLimit = getHeapStatistics().heap_size_limit;
  if (s.memoryMaxBytes > heapLimit / 2) {
    logger.warn(
      `MEMORY_MAX_BYTES=${s.memoryMaxBytes} is more than half of the V8 heap limit (${heapLimit} bytes): the process may run out of memory first; lower it or raise node's --max-old-space-size`,
    );
  }
  const scope = "ratelimit.memory";
  const store = new MemoryStore({
    maxBytes: s.memoryMaxBytes,
    reports: { evictions: stats.counter(`${scope}.evictions`), log: logger },
  });
  stats.gauge(`${scope}.bytes`, undefined, () => store.bytes);
  stats.gauge(`${scope}.keys`, undefined, () => store.size);
  stats.gauge(`${scope}.max_bytes`, undefined, () => store.maxBytes);
  return store;
}

/** gomemcache's `DefaultTimeout`, which the reference keeps: the bound on each memcached operation. */
const MEMCACHE_TIMEOUT_MS = 100;

function memcachedStore(s: Settings, { stats, logger, throttledLog }: StoreContext): MemcachedStore {
  if (s.memcacheHostPort.length === 0 && s.memcacheSrv === "") {
    throw new SettingsError(["BACKEND_TYPE=memcache needs MEMCACHE_HOST_PORT or MEMCACHE_SRV"]);
  }
  const scope = "ratelimit.memcache";
  const tagged = (name: string, code: string) => stats.counter(`${scope}.${name}`, { code });
  return new MemcachedStore({
    servers:
      s.memcacheSrv !== ""
        ? { srv: s.memcacheSrv, refreshMs: s.memcacheSrvRefreshMs }
        : { endpoints: memcachedEndpoints(s.memcacheHostPort) },
    connectionsPerNode: s.memcacheMaxIdleConns,
    tls: s.memcacheTls
      ? tlsOptionsFromFiles({
          clientCertFile: s.memcacheTlsClientCert,
          clientKeyFile: s.memcacheTlsClientKey,
          caFile: s.memcacheTlsCacert,
          skipHostnameVerification: s.memcacheTlsSkipHostnameVerification,
        })
      : undefined,
    timeoutMs: MEMCACHE_TIMEOUT_MS,
    startup: { initialIntervalMs: 1000, maxIntervalMs: 30_000 },
    stats: {
      multigetSuccess: tagged("multiget", "success"),
      multigetError: tagged("multiget", "error"),
      incrementSuccess: tagged("increment", "success"),
      incrementMiss: tagged("increment", "miss"),
      incrementError: tagged("increment", "error"),
      addSuccess: tagged("add", "success"),
      addError: tagged("add", "error"),
      addNotStored: tagged("add", "not_stored"),
      keysRequested: stats.counter(`${scope}.keys_requested`),
      keysFound: stats.counter(`${scope}.keys_found`),
    },
    log: logger,
    throttledLog,
  });
}

function redisTls(settings: Settings): TlsFiles {
  return {
    clientCertFile: settings.redisTlsClientCert,
    clientKeyFile: settings.redisTlsClientKey,
    caFile: settings.redisTlsCacert,
    skipHostnameVerification: settings.redisTlsSkipHostnameVerification,
  };
}

function poolStats(scope: string, { stats }: StoreContext): RedisPoolOptions["stats"] {
  return {
    cxTotal: stats.counter(`${scope}.cx_total`),
    cxLocalClose: stats.counter(`${scope}.cx_local_close`),
    cxActive: stats.gauge(`${scope}.cx_active`),
  };
}

function mainPool(s: Settings, context: StoreContext): RedisPoolOptions {
  return {
    name: "redis",
    endpoint: {
      type: s.redisType,
      socketType: s.redisSocketType,
      url: s.redisUrl,
      auth: s.redisAuth,
      sentinelAuth: s.redisSentinelAuth,
      tls: s.redisTls ? redisTls(s) : undefined,
      timeoutMs: s.redisTimeoutMs,
    },
    size: s.redisPoolSize,
    pipelineWindowMs: s.redisPipelineWindowMs,
    pipelineLimit: s.redisPipelineLimit,
    clusterParallelism: s.redisClusterPipelineParallelism,
    stats: poolStats("ratelimit.redis_pool", context),
    log: context.logger,
    throttledLog: context.throttledLog,
  };
}

function perSecondPool(s: Settings, context: StoreContext): RedisPoolOptions {
  return {
    name: "redis per-second",
    endpoint: {
      type: s.redisPerSecondType,
      socketType: s.redisPerSecondSocketType,
      url: s.redisPerSecondUrl,
      auth: s.redisPerSecondAuth,
      sentinelAuth: s.redisPerSecondSentinelAuth,
      tls: s.redisPerSecondTls ? redisTls(s) : undefined,
      timeoutMs: s.redisPerSecondTimeoutMs,
    },
    size: s.redisPerSecondPoolSize,
    pipelineWindowMs: s.redisPerSecondPipelineWindowMs,
    pipelineLimit: s.redisPerSecondPipelineLimit,
    clusterParallelism: s.redisPerSecondClusterPipelineParallelism,
    stats: poolStats("ratelimit.redis_per_second_pool", context),
    log: context.logger,
    throttledLog: context.throttledLog,
  };
}
