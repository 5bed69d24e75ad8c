import t from "tap";
import { loadSettings, type Settings } from "../../../src/settings/load-settings.js";
import { SETTINGS_TABLE } from "../../../src/settings/settings-table.js";

/** [variable, Settings field, value expected when the variable is unset] — the reference's defaults. */
type Row = readonly [string, keyof Settings, unknown];

// Listeners / server.
const LISTENERS: Row[] = [
  ["HOST", "host", "0.0.0.0"],
  ["PORT", "port", 8080],
  ["DEBUG_HOST", "debugHost", "0.0.0.0"],
  ["DEBUG_PORT", "debugPort", 6070],
  ["DEBUG_HEAP_SNAPSHOT_ENABLED", "debugHeapSnapshotEnabled", false],
  ["GRPC_UDS", "grpcUds", ""],
  ["GRPC_HOST", "grpcHost", "0.0.0.0"],
  ["GRPC_PORT", "grpcPort", 8081],
  ["GRPC_MAX_CONNECTION_AGE", "grpcMaxConnectionAgeMs", 24 * 3_600_000],
  ["GRPC_MAX_CONNECTION_AGE_GRACE", "grpcMaxConnectionAgeGraceMs", 3_600_000],
  ["GRPC_MAX_CONCURRENT_STREAMS", "grpcMaxConcurrentStreams", 1000],
  ["GRPC_MAX_TOTAL_STREAMS", "grpcMaxTotalStreams", 10_000],
  ["GRPC_REQUEST_READ_TIMEOUT", "grpcRequestReadTimeoutMs", 10_000],
  ["GRPC_MAX_CONNECTION_IDLE", "grpcMaxConnectionIdleMs", 300_000],
  ["GRPC_SERVER_USE_TLS", "grpcServerUseTls", false],
  ["GRPC_SERVER_TLS_CERT", "grpcServerTlsCert", ""],
  ["GRPC_CLIENT_TLS_CACERT", "grpcClientTlsCacert", ""],
  ["LOG_LEVEL", "logLevel", "warn"],
  ["LOG_FORMAT", "logFormat", "text"],
];

// Configuration source.
const CONFIG_SOURCE: Row[] = [
  ["CONFIG_TYPE", "configType", "FILE"],
  ["FORCE_START_WITHOUT_INITIAL_CONFIG", "forceStartWithoutInitialConfig", false],
  ["RUNTIME_ROOT", "runtimeRoot", "/srv/runtime_data/current"],
  ["RUNTIME_SUBDIRECTORY", "runtimeSubdirectory", ""],
  ["RUNTIME_APPDIRECTORY", "runtimeAppDirectory", "config"],
  ["RUNTIME_IGNOREDOTFILES", "runtimeIgnoreDotfiles", false],
  ["RUNTIME_WATCH_ROOT", "runtimeWatchRoot", true],
  ["MERGE_DOMAIN_CONFIG", "mergeDomainConfig", false],
  ["CONFIG_GRPC_XDS_NODE_ID", "xdsNodeId", "default"],
  ["CONFIG_GRPC_XDS_NODE_METADATA", "xdsNodeMetadata", ""],
  ["CONFIG_GRPC_XDS_SERVER_URL", "xdsServerUrl", "localhost:18000"],
  ["CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL", "xdsServerConnectRetryIntervalMs", 3000],
  ["CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS", "xdsClientAdditionalHeaders", {}],
  ["XDS_CLIENT_BACKOFF_INITIAL_INTERVAL", "xdsBackoffInitialIntervalMs", 10_000],
  ["XDS_CLIENT_BACKOFF_MAX_INTERVAL", "xdsBackoffMaxIntervalMs", 60_000],
  ["XDS_CLIENT_BACKOFF_RANDOM_FACTOR", "xdsBackoffRandomFactor", 0.5],
  ["XDS_CLIENT_BACKOFF_JITTER", "xdsBackoffJitter", true],
  ["XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES", "xdsMaxMessageSizeBytes", 0],
];

// Stats (STATSD_PROTOCOL is gostats' own variable, default tcp; STATS_MAX_DYNAMIC_KEYS is ratelimitd's own,
// README "Compatibility notes").
const STATS: Row[] = [
  ["USE_STATSD", "useStatsd", true],
  ["STATSD_HOST", "statsdHost", "localhost"],
  ["STATSD_PORT", "statsdPort", 8125],
  ["STATSD_PROTOCOL", "statsdProtocol", "tcp"],
  ["USE_DOG_STATSD", "useDogStatsd", false],
  ["USE_DOG_STATSD_MOGRIFIERS", "useDogStatsdMogrifiers", []],
  ["USE_PROMETHEUS", "usePrometheus", false],
  ["PROMETHEUS_ADDR", "prometheusAddr", ":9090"],
  ["PROMETHEUS_PATH", "prometheusPath", "/metrics"],
  ["PROMETHEUS_MAPPER_YAML", "prometheusMapperYaml", ""],
  ["PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS", "prometheusResponseTimeAsMilliseconds", false],
  ["EXTRA_TAGS", "extraTags", {}],
  ["STATS_FLUSH_INTERVAL", "statsFlushIntervalMs", 10_000],
  ["DISABLE_STATS", "disableStats", false],
  ["STATS_MAX_DYNAMIC_KEYS", "statsMaxDynamicKeys", 10_000],
];

// Cache-common settings, headers, modes, health.
const CACHE_AND_MODES: Row[] = [
  ["BACKEND_TYPE", "backend", "redis"],
  ["EXPIRATION_JITTER_MAX_SECONDS", "expirationJitterMaxSeconds", 300],
  ["LOCAL_CACHE_SIZE_IN_BYTES", "localCacheSizeInBytes", 0],
  ["NEAR_LIMIT_RATIO", "nearLimitRatio", 0.8],
  ["CACHE_KEY_PREFIX", "cacheKeyPrefix", ""],
  ["STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", "stopCacheKeyIncrementWhenOverlimit", false],
  ["LIMIT_RESPONSE_HEADERS_ENABLED", "limitResponseHeadersEnabled", false],
  ["LIMIT_RESPONSE_HEADERS_FORMAT", "limitResponseHeadersFormat", "legacy"],
  ["LIMIT_LIMIT_HEADER", "limitLimitHeader", "RateLimit-Limit"],
  ["LIMIT_REMAINING_HEADER", "limitRemainingHeader", "RateLimit-Remaining"],
  ["LIMIT_RESET_HEADER", "limitResetHeader", "RateLimit-Reset"],
  ["SHADOW_MODE", "shadowMode", false],
  ["QUOTA_MODE", "quotaMode", false],
  ["RESPONSE_DYNAMIC_METADATA", "responseDynamicMetadata", false],
  ["HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED", "healthyWithAtLeastOneConfigLoaded", false],
];

// Redis (REDIS_TYPE's SINGLE is matched case-insensitively; the canonical spelling is lower case).
const REDIS: Row[] = [
  ["REDIS_SOCKET_TYPE", "redisSocketType", "unix"],
  ["REDIS_TYPE", "redisType", "single"],
  ["REDIS_URL", "redisUrl", "/var/run/nutcracker/ratelimit.sock"],
  ["REDIS_POOL_SIZE", "redisPoolSize", 10],
  ["REDIS_AUTH", "redisAuth", ""],
  ["REDIS_TLS", "redisTls", false],
  ["REDIS_TLS_SKIP_HOSTNAME_VERIFICATION", "redisTlsSkipHostnameVerification", false],
  ["REDIS_PIPELINE_WINDOW", "redisPipelineWindowMs", 0],
  ["REDIS_PIPELINE_LIMIT", "redisPipelineLimit", 0],
  ["REDIS_CLUSTER_PIPELINE_PARALLELISM", "redisClusterPipelineParallelism", 1],
  ["REDIS_POOL_ON_EMPTY_BEHAVIOR", "redisPoolOnEmptyBehavior", "WAIT"],
  ["REDIS_TIMEOUT", "redisTimeoutMs", 10_000],
  ["REDIS_CLOSE_CONNECTION_ON_READONLY_ERROR", "redisCloseConnectionOnReadonlyError", false],
  ["REDIS_HEALTH_CHECK_ACTIVE_CONNECTION", "redisHealthCheckActiveConnection", false],
  ["REDIS_STARTUP_INITIAL_INTERVAL", "redisStartupInitialIntervalMs", 1000],
  ["REDIS_STARTUP_MAX_INTERVAL", "redisStartupMaxIntervalMs", 30_000],
  ["REDIS_STARTUP_MAX_ELAPSED_TIME", "redisStartupMaxElapsedTimeMs", 0],
  ["REDIS_PERSECOND", "redisPerSecond", false],
  ["REDIS_PERSECOND_SOCKET_TYPE", "redisPerSecondSocketType", "unix"],
  ["REDIS_PERSECOND_TYPE", "redisPerSecondType", "single"],
  ["REDIS_PERSECOND_URL", "redisPerSecondUrl", "/var/run/nutcracker/ratelimitpersecond.sock"],
  ["REDIS_PERSECOND_POOL_SIZE", "redisPerSecondPoolSize", 10],
  ["REDIS_PERSECOND_CLUSTER_PIPELINE_PARALLELISM", "redisPerSecondClusterPipelineParallelism", 1],
  ["REDIS_PERSECOND_TIMEOUT", "redisPerSecondTimeoutMs", 10_000],
  ["REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR", "redisPerSecondPoolOnEmptyBehavior", "WAIT"],
];

// Memcache and tracing.
const MEMCACHE_AND_TRACING: Row[] = [
  ["MEMCACHE_HOST_PORT", "memcacheHostPort", []],
  ["MEMCACHE_SRV", "memcacheSrv", ""],
  ["MEMCACHE_SRV_REFRESH", "memcacheSrvRefreshMs", 0],
  ["MEMCACHE_MAX_IDLE_CONNS", "memcacheMaxIdleConns", 2],
  ["MEMCACHE_TLS", "memcacheTls", false],
  ["TRACING_ENABLED", "tracingEnabled", false],
  ["TRACING_SERVICE_NAME", "tracingServiceName", "RateLimit"],
  ["TRACING_SERVICE_NAMESPACE", "tracingServiceNamespace", ""],
  ["TRACING_SERVICE_INSTANCE_ID", "tracingServiceInstanceId", ""],
  ["TRACING_EXPORTER_PROTOCOL", "tracingExporterProtocol", "http"],
  ["TRACING_SAMPLING_RATE", "tracingSamplingRate", 1],
];

// ratelimitd's bounds on the memory backend and on one request (README "Memory backend", "Endpoints").
const BOUNDS: Row[] = [
  ["MEMORY_MAX_BYTES", "memoryMaxBytes", 256 * 1024 * 1024],
  ["MAX_DESCRIPTORS_PER_REQUEST", "maxDescriptorsPerRequest", 256],
  ["MAX_ENTRIES_PER_DESCRIPTOR", "maxEntriesPerDescriptor", 64],
  ["MAX_DESCRIPTOR_ENTRY_BYTES", "maxDescriptorEntryBytes", 8192],
];

const GROUPS = { LISTENERS, CONFIG_SOURCE, STATS, CACHE_AND_MODES, REDIS, MEMCACHE_AND_TRACING, BOUNDS };

t.test("an empty environment yields the reference's defaults", (t) => {
  const settings = loadSettings({});
  for (const [group, rows] of Object.entries(GROUPS)) {
    t.test(group, (t) => {
      for (const [env, field, expected] of rows)
        t.strictSame(settings[field], expected, `${env} defaults to ${JSON.stringify(expected)}`);
      t.end();
    });
  }
  t.strictSame(settings.dogStatsdMogrifiers, [], "no mogrifiers");
  t.strictSame(settings.xdsNodeMetadataMap, {}, "no node metadata");
  t.strictSame(settings.warnings, [], "defaults raise no warning");
  t.end();
});

// Every row above names a variable the table really reads, under that name.
t.test("each checked variable is the table's variable for that field", (t) => {
  const envOf = new Map(Object.entries(SETTINGS_TABLE).map(([field, spec]) => [field, spec.env]));
  for (const rows of Object.values(GROUPS)) {
    for (const [env, field] of rows) {
      if (field === "backend") continue; // derived from BACKEND_TYPE
      t.equal(envOf.get(field), env, `${field} is read from ${env}`);
    }
  }
  t.end();
});

// A variable set to the empty string is used as set (envconfig), not replaced by the default.
t.test("a variable set to empty is not its default", (t) => {
  const settings = loadSettings({ HOST: "", REDIS_URL: "", STATSD_HOST: "", CACHE_KEY_PREFIX: "" });
  t.equal(settings.host, "");
  t.equal(settings.redisUrl, "");
  t.equal(settings.statsdHost, "");
  t.equal(settings.backend, "redis", "BACKEND_TYPE unset is redis");
  t.equal(loadSettings({ BACKEND_TYPE: "" }).backend, "redis", 'BACKEND_TYPE="" is redis');
  t.end();
});
