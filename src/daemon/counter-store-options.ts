import type { CounterStoreOptions } from "../backends/create-counter-store.js";
import type { MemcachedBackendOptions } from "../backends/memcached/create-memcached-store.js";
import type { RedisDeploymentOptions } from "../backends/redis/create-redis-store.js";
import type { TlsFiles } from "../backends/tls-files.js";
import { SettingsError } from "../errors.js";
import type { Settings } from "../settings/load-settings.js";
import { parseNetworkAddress } from "../settings/value-parsers.js";

/**
 * BACKEND_TYPE and the chosen backend's settings, as the store factory takes them: one case per backend of
 * the registry (src/backends/backend-registry.ts); a backend without its case does not compile.
 */
export function counterStoreOptions(settings: Settings): CounterStoreOptions {
  switch (settings.backend) {
    case "memory":
      return { backend: "memory", options: { maxBytes: settings.memoryMaxBytes } };
    case "redis":
      return {
        backend: "redis",
        options: {
          main: mainDeployment(settings),
          perSecond: settings.redisPerSecond ? perSecondDeployment(settings) : undefined,
          startup: {
            initialIntervalMs: settings.redisStartupInitialIntervalMs,
            maxIntervalMs: settings.redisStartupMaxIntervalMs,
            maxElapsedMs: settings.redisStartupMaxElapsedTimeMs,
          },
          healthCheckActiveConnection: settings.redisHealthCheckActiveConnection,
        },
      };
    case "memcache":
      return { backend: "memcache", options: memcachedOptions(settings) };
  }
}

function memcachedOptions(s: Settings): MemcachedBackendOptions {
  if (s.memcacheHostPort.length === 0 && s.memcacheSrv === "") {
    throw new SettingsError(["BACKEND_TYPE=memcache needs MEMCACHE_HOST_PORT or MEMCACHE_SRV"]);
  }
  return {
    servers:
      s.memcacheSrv !== ""
        ? { srv: s.memcacheSrv, refreshMs: s.memcacheSrvRefreshMs }
        : { endpoints: s.memcacheHostPort.map(memcachedEndpoint) },
    connectionsPerNode: s.memcacheMaxIdleConns,
    // Mode error keeps the reference's fail-open reads; the other modes answer failed reads themselves.
    failOpen: s.backendFailureMode === "error",
    tls: s.memcacheTls
      ? {
          clientCertFile: s.memcacheTlsClientCert,
          clientKeyFile: s.memcacheTlsClientKey,
          caFile: s.memcacheTlsCacert,
          skipHostnameVerification: s.memcacheTlsSkipHostnameVerification,
        }
      : undefined,
  };
}

/** A MEMCACHE_HOST_PORT item (already validated by the settings). */
function memcachedEndpoint(item: string) {
  const parsed = parseNetworkAddress(item);
  if (!parsed.ok) throw new Error(`invalid memcache node: ${parsed.reason}`);
  return parsed.value;
}

function redisTls(s: Settings): TlsFiles {
  return {
    clientCertFile: s.redisTlsClientCert,
    clientKeyFile: s.redisTlsClientKey,
    caFile: s.redisTlsCacert,
    skipHostnameVerification: s.redisTlsSkipHostnameVerification,
  };
}

function mainDeployment(s: Settings): RedisDeploymentOptions {
  return {
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
  };
}

function perSecondDeployment(s: Settings): RedisDeploymentOptions {
  return {
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
  };
}
