import { type DatabaseLocation, parseDatabaseLocation } from "../database/database-location.js";
import { DEFAULT_REQUEST_LIMITS } from "../engine/request-limits.js";
import { backendTypeSetting } from "./backend-type.js";
import {
  bool,
  custom,
  durationMs,
  float,
  int,
  list,
  map,
  oneOf,
  type SettingSpec,
  str,
} from "./setting-spec.js";
import { parseWorkers, type WorkersSetting } from "./workers-setting.js";

const PORT = [0, 65535] as const;
const DEFAULT_DATABASE_URL = "sqlite:./data/ratelimitd.db";

/**
 * Every environment variable ratelimitd reads, with the reference's names, types and defaults
 * (envoyproxy/ratelimit `settings.go`), plus a few of our own (marked "ratelimitd:").
 * `REDIS_*` may also be spelled `KVSTORE_*` and `MEMCACHE_*` `ALTCACHE_*` (see `load-settings.ts`).
 */
export const SETTINGS_TABLE = {
  // Listeners
  host: str("HOST", "0.0.0.0", "HTTP listen host (/json, /healthcheck, REST APIs)"),
  port: int("PORT", 8080, "HTTP port", ...PORT),
  debugHost: str("DEBUG_HOST", "0.0.0.0", "debug listener host"),
  debugPort: int("DEBUG_PORT", 6070, "debug port (/rlconfig, /stats, /metrics, /debug/pprof/)", ...PORT),
  debugHeapSnapshotEnabled: bool(
    "DEBUG_HEAP_SNAPSHOT_ENABLED",
    false,
    "ratelimitd: serve /debug/pprof/heap (snapshots hold secrets and stall requests)",
  ),
  consoleEnabled: bool(
    "CONSOLE_ENABLED",
    true,
    'ratelimitd: serve the operator console at /console on the debug port (README "Operator console")',
  ),
  grpcUds: str("GRPC_UDS", "", "if set, gRPC listens on this unix socket instead of GRPC_HOST:GRPC_PORT"),
  grpcHost: str("GRPC_HOST", "0.0.0.0", "gRPC listen host"),
  grpcPort: int("GRPC_PORT", 8081, "gRPC port (also Connect and gRPC-Web)", ...PORT),
  grpcMaxConnectionAgeMs: durationMs(
    "GRPC_MAX_CONNECTION_AGE",
    "24h",
    "GOAWAY after this age (±10 % jitter)",
  ),
  grpcMaxConnectionAgeGraceMs: durationMs(
    "GRPC_MAX_CONNECTION_AGE_GRACE",
    "1h",
    "forced close after age + grace",
  ),
  grpcMaxConcurrentStreams: int(
    "GRPC_MAX_CONCURRENT_STREAMS",
    1000,
    "ratelimitd (envoyproxy/ratelimit PR #1189's name): streams per HTTP/2 connection, in SETTINGS; 0 = no limit",
    0,
    2 ** 32 - 1,
  ),
  grpcMaxTotalStreams: int(
    "GRPC_MAX_TOTAL_STREAMS",
    10000,
    "ratelimitd: HTTP/2 streams open at once in the process (all ports); more get REFUSED_STREAM; 0 = no limit",
    0,
    2 ** 32 - 1,
  ),
  grpcRequestReadTimeoutMs: durationMs(
    "GRPC_REQUEST_READ_TIMEOUT",
    "10s",
    "ratelimitd: time a client has to send a whole request, else it is answered and reset; 0 = no limit",
  ),
  grpcMaxConnectionIdleMs: durationMs(
    "GRPC_MAX_CONNECTION_IDLE",
    "5m",
    "ratelimitd (grpc-go's MaxConnectionIdle): GOAWAY to an HTTP/2 connection without calls this long; 0 = never",
  ),
  grpcServerUseTls: bool("GRPC_SERVER_USE_TLS", false, "serve gRPC over TLS"),
  grpcServerTlsCert: str("GRPC_SERVER_TLS_CERT", "", "server certificate chain file (hot-reloaded)"),
  grpcServerTlsKey: str("GRPC_SERVER_TLS_KEY", "", "server private key file (hot-reloaded)"),
  grpcClientTlsCacert: str(
    "GRPC_CLIENT_TLS_CACERT",
    "",
    "client CA file: enables mTLS (also read as GRPC_SERVER_TLS_CA_CERT, Envoy Gateway's name)",
  ),
  grpcClientTlsSan: str("GRPC_CLIENT_TLS_SAN", "", "DNS name the client certificate must carry"),
  logLevel: oneOf(
    "LOG_LEVEL",
    "warn",
    ["trace", "debug", "info", "warn", "warning", "error", "fatal", "panic"] as const,
    "log level",
  ),
  logFormat: str("LOG_FORMAT", "text", "json for JSON lines, anything else for text"),
  shutdownGraceMs: durationMs(
    "SHUTDOWN_GRACE_PERIOD",
    "15s",
    "ratelimitd: after SIGTERM, how long requests in flight may take before connections are closed",
  ),

  // Rule source
  configType: oneOf("CONFIG_TYPE", "FILE", ["FILE", "GRPC_XDS_SOTW"] as const, "where rules come from"),
  forceStartWithoutInitialConfig: bool(
    "FORCE_START_WITHOUT_INITIAL_CONFIG",
    false,
    "start serving before the first rules load",
  ),
  runtimeRoot: str("RUNTIME_ROOT", "/srv/runtime_data/current", "rules root directory (or symlink)"),
  runtimeSubdirectory: str("RUNTIME_SUBDIRECTORY", "", "subdirectory of RUNTIME_ROOT"),
  runtimeAppDirectory: str("RUNTIME_APPDIRECTORY", "config", "directory holding the YAML rule files"),
  runtimeIgnoreDotfiles: bool("RUNTIME_IGNOREDOTFILES", false, "skip dotfiles and dot-directories"),
  runtimeWatchRoot: bool(
    "RUNTIME_WATCH_ROOT",
    true,
    "true: reload on symlink swap of RUNTIME_ROOT; false: on file changes",
  ),
  mergeDomainConfig: bool("MERGE_DOMAIN_CONFIG", false, "allow several files to define one domain"),
  configMaxDescriptors: int(
    "CONFIG_MAX_DESCRIPTORS",
    1_000_000,
    "ratelimitd: most descriptors all rules may hold (nested included)",
    1,
  ),
  xdsNodeId: str("CONFIG_GRPC_XDS_NODE_ID", "default", "xDS node id"),
  xdsNodeMetadata: str("CONFIG_GRPC_XDS_NODE_METADATA", "", "xDS node metadata as k1=v1,k2=v2"),
  xdsServerUrl: str("CONFIG_GRPC_XDS_SERVER_URL", "localhost:18000", "xDS management server address"),
  xdsServerConnectRetryIntervalMs: durationMs(
    "CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL",
    "3s",
    "xDS stream retry interval (±50 % jitter)",
  ),
  xdsClientAdditionalHeaders: map(
    "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS",
    "extra gRPC metadata k1:v1,k2:v2",
    {
      secret: true,
    },
  ),
  xdsServerUseTls: bool("CONFIG_GRPC_XDS_SERVER_USE_TLS", false, "TLS to the xDS server"),
  xdsClientTlsCert: str("CONFIG_GRPC_XDS_CLIENT_TLS_CERT", "", "xDS client certificate file"),
  xdsClientTlsKey: str("CONFIG_GRPC_XDS_CLIENT_TLS_KEY", "", "xDS client key file"),
  xdsServerTlsCacert: str("CONFIG_GRPC_XDS_SERVER_TLS_CACERT", "", "CA file for the xDS server"),
  xdsServerTlsSan: str("CONFIG_GRPC_XDS_SERVER_TLS_SAN", "", "server name to verify instead of the host"),
  xdsBackoffInitialIntervalMs: durationMs(
    "XDS_CLIENT_BACKOFF_INITIAL_INTERVAL",
    "10s",
    "xDS reconnect backoff minimum",
  ),
  xdsBackoffMaxIntervalMs: durationMs(
    "XDS_CLIENT_BACKOFF_MAX_INTERVAL",
    "60s",
    "xDS reconnect backoff maximum",
  ),
  xdsBackoffRandomFactor: float("XDS_CLIENT_BACKOFF_RANDOM_FACTOR", 0.5, "xDS backoff multiplier", 0),
  xdsBackoffJitter: bool("XDS_CLIENT_BACKOFF_JITTER", true, "jitter the xDS reconnect backoff"),
  xdsMaxMessageSizeBytes: int(
    "XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES",
    0,
    "max xDS message size; 0 = gRPC default",
    0,
  ),

  // Stats
  useStatsd: bool("USE_STATSD", true, "send stats to statsd"),
  statsdHost: str("STATSD_HOST", "localhost", "statsd / DogStatsD host"),
  statsdPort: int("STATSD_PORT", 8125, "statsd / DogStatsD port", ...PORT),
  statsdProtocol: oneOf(
    "STATSD_PROTOCOL",
    "tcp",
    ["tcp", "udp"] as const,
    "statsd transport (gostats' setting)",
  ),
  useDogStatsd: bool("USE_DOG_STATSD", false, "send stats to DogStatsD with tags"),
  useDogStatsdMogrifiers: list(
    "USE_DOG_STATSD_MOGRIFIERS",
    "mogrifier names; each reads DOG_STATSD_MOGRIFIER_<X>_*",
  ),
  usePrometheus: bool("USE_PROMETHEUS", false, "serve Prometheus metrics on PROMETHEUS_ADDR"),
  prometheusAddr: str("PROMETHEUS_ADDR", ":9090", "Prometheus listen address"),
  prometheusPath: str("PROMETHEUS_PATH", "/metrics", "Prometheus path"),
  prometheusMapperYaml: str("PROMETHEUS_MAPPER_YAML", "", "statsd_exporter mapping file (default: built in)"),
  prometheusResponseTimeAsMilliseconds: bool(
    "PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS",
    false,
    "response-time histogram in ms instead of s",
  ),
  extraTags: map("EXTRA_TAGS", "tags k1:v1,k2:v2 added to every stat"),
  statsFlushIntervalMs: durationMs("STATS_FLUSH_INTERVAL", "10s", "how often stats are sent to sinks"),
  disableStats: bool("DISABLE_STATS", false, "send no stats anywhere"),
  statsMaxDynamicKeys: int(
    "STATS_MAX_DYNAMIC_KEYS",
    10000,
    "ratelimitd: cap on request-derived stat keys (detailed_metric, overrides), least recently used evicted",
    1,
  ),

  // Counters, common to every backend
  backendType: backendTypeSetting(),
  expirationJitterMaxSeconds: int(
    "EXPIRATION_JITTER_MAX_SECONDS",
    300,
    "random extra TTL [0, N-1] s per key",
    0,
  ),
  localCacheSizeInBytes: int("LOCAL_CACHE_SIZE_IN_BYTES", 0, "over-limit cache size; 0 disables", 0),
  nearLimitRatio: float("NEAR_LIMIT_RATIO", 0.8, "near_limit threshold ratio", 0, 1),
  cacheKeyPrefix: str("CACHE_KEY_PREFIX", "", "prefix of every cache key"),
  stopCacheKeyIncrementWhenOverlimit: bool(
    "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT",
    false,
    "Redis: do not count hits of a request that is over any limit",
  ),

  // Backend outages (ratelimitd; README "When the counter store fails")
  backendFailureMode: oneOf(
    "BACKEND_FAILURE_MODE",
    "error",
    ["error", "allow", "deny", "local"] as const,
    "ratelimitd: a decision's answer while the counter store fails: error (the reference), allow, deny, local",
  ),
  backendLocalLimitFraction: float(
    "BACKEND_LOCAL_LIMIT_FRACTION",
    1,
    "ratelimitd: BACKEND_FAILURE_MODE=local: the share of each limit this replica allows (0.25 for 4 replicas)",
    0,
    1,
  ),
  backendBreakerFailures: int(
    "BACKEND_BREAKER_FAILURES",
    5,
    "ratelimitd: consecutive failed counter-store calls that open the circuit breaker; 0 = no breaker",
    0,
  ),
  backendBreakerCooldownMs: durationMs(
    "BACKEND_BREAKER_COOLDOWN",
    "1s",
    "ratelimitd: how long the open breaker waits before one probe; doubles per failed probe",
  ),
  backendBreakerMaxCooldownMs: durationMs(
    "BACKEND_BREAKER_MAX_COOLDOWN",
    "30s",
    "ratelimitd: the longest the breaker's cooldown grows to",
  ),
  backendMaxPending: int(
    "BACKEND_MAX_PENDING",
    10000,
    "ratelimitd: counter-store calls waiting at once; beyond, decisions get the failure mode at once",
    1,
  ),

  // Memory backend (ratelimitd)
  memoryMaxBytes: int(
    "MEMORY_MAX_BYTES",
    268435456,
    "ratelimitd: BACKEND_TYPE=memory: most bytes its counters take, least recently used evicted beyond",
    16 * 1024 * 1024,
  ),

  // Worker threads (ratelimitd, docs/workers.md)
  workers: custom<WorkersSetting>(
    "WORKERS",
    "1",
    1,
    parseWorkers,
    "ratelimitd: threads serving decisions on the gRPC and HTTP ports: a number, or auto (the CPUs this process may use)",
  ),

  // Limits on one request (ratelimitd)
  maxDescriptorsPerRequest: int(
    "MAX_DESCRIPTORS_PER_REQUEST",
    DEFAULT_REQUEST_LIMITS.maxDescriptors,
    "ratelimitd: most descriptors in one request",
    1,
  ),
  maxEntriesPerDescriptor: int(
    "MAX_ENTRIES_PER_DESCRIPTOR",
    DEFAULT_REQUEST_LIMITS.maxEntries,
    "ratelimitd: most entries in one descriptor",
    1,
  ),
  maxDescriptorEntryBytes: int(
    "MAX_DESCRIPTOR_ENTRY_BYTES",
    DEFAULT_REQUEST_LIMITS.maxEntryBytes,
    "ratelimitd: longest domain, entry key or entry value, in UTF-8 bytes",
    1,
  ),

  // Response headers, modes, health
  limitResponseHeadersEnabled: bool(
    "LIMIT_RESPONSE_HEADERS_ENABLED",
    false,
    "add RateLimit-* response headers",
  ),
  limitResponseHeadersFormat: oneOf(
    "LIMIT_RESPONSE_HEADERS_FORMAT",
    "legacy",
    ["legacy", "ietf"] as const,
    "ratelimitd: legacy (RateLimit-Limit/-Remaining/-Reset) or ietf (RateLimit-Policy and RateLimit, draft-ietf-httpapi-ratelimit-headers-11)",
  ),
  limitLimitHeader: str("LIMIT_LIMIT_HEADER", "RateLimit-Limit", "limit header name"),
  limitRemainingHeader: str("LIMIT_REMAINING_HEADER", "RateLimit-Remaining", "remaining header name"),
  limitResetHeader: str("LIMIT_RESET_HEADER", "RateLimit-Reset", "reset header name"),
  shadowMode: bool("SHADOW_MODE", false, "global shadow mode: never deny"),
  quotaMode: bool("QUOTA_MODE", false, "treat every rule as quota_mode"),
  responseDynamicMetadata: bool("RESPONSE_DYNAMIC_METADATA", false, "fill dynamic_metadata in responses"),
  healthyWithAtLeastOneConfigLoaded: bool(
    "HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED",
    false,
    "unhealthy until rules with a domain are loaded",
  ),

  // Redis (also KVSTORE_*)
  redisSocketType: oneOf("REDIS_SOCKET_TYPE", "unix", ["tcp", "unix"] as const, "tcp or unix"),
  redisType: oneOf(
    "REDIS_TYPE",
    "single",
    ["single", "sentinel", "cluster"] as const,
    "single, sentinel or cluster",
  ),
  redisUrl: str("REDIS_URL", "/var/run/nutcracker/ratelimit.sock", "host:port, socket path, or node list"),
  redisPoolSize: int("REDIS_POOL_SIZE", 10, "connections", 1),
  redisAuth: str("REDIS_AUTH", "", "password or user:password", { secret: true }),
  redisTls: bool("REDIS_TLS", false, "TLS to Redis"),
  redisTlsClientCert: str("REDIS_TLS_CLIENT_CERT", "", "client certificate file"),
  redisTlsClientKey: str("REDIS_TLS_CLIENT_KEY", "", "client key file"),
  redisTlsCacert: str("REDIS_TLS_CACERT", "", "CA file (added to the system roots)"),
  redisTlsSkipHostnameVerification: bool(
    "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION",
    false,
    "verify chain, not host",
  ),
  redisPipelineWindowMs: durationMs("REDIS_PIPELINE_WINDOW", "0", "batch commands of concurrent requests"),
  redisPipelineLimit: int(
    "REDIS_PIPELINE_LIMIT",
    0,
    "flush a batch at this many commands; 0 = window only",
    0,
  ),
  redisClusterPipelineParallelism: int(
    "REDIS_CLUSTER_PIPELINE_PARALLELISM",
    1,
    "cluster: slot groups in parallel; 0 = pool size",
    0,
  ),
  redisPoolOnEmptyBehavior: oneOf("REDIS_POOL_ON_EMPTY_BEHAVIOR", "WAIT", ["WAIT"] as const, "only WAIT"),
  redisTimeoutMs: durationMs("REDIS_TIMEOUT", "10s", "bound on connecting and on every command"),
  redisCloseConnectionOnReadonlyError: bool(
    "REDIS_CLOSE_CONNECTION_ON_READONLY_ERROR",
    false,
    "accepted (envoyproxy/ratelimit PR #1191); a READONLY reply always drops the connection",
  ),
  redisSentinelAuth: str("REDIS_SENTINEL_AUTH", "", "sentinel password or user:password", { secret: true }),
  redisHealthCheckActiveConnection: bool(
    "REDIS_HEALTH_CHECK_ACTIVE_CONNECTION",
    false,
    "unhealthy while no connection is up",
  ),
  redisStartupInitialIntervalMs: durationMs(
    "REDIS_STARTUP_INITIAL_INTERVAL",
    "1s",
    "startup retry backoff min",
  ),
  redisStartupMaxIntervalMs: durationMs("REDIS_STARTUP_MAX_INTERVAL", "30s", "startup retry backoff max"),
  redisStartupMaxElapsedTimeMs: durationMs("REDIS_STARTUP_MAX_ELAPSED_TIME", "0", "give up after; 0 = never"),
  redisPerSecond: bool("REDIS_PERSECOND", false, "separate Redis for SECOND limits"),
  redisPerSecondSocketType: oneOf(
    "REDIS_PERSECOND_SOCKET_TYPE",
    "unix",
    ["tcp", "unix"] as const,
    "tcp or unix",
  ),
  redisPerSecondType: oneOf(
    "REDIS_PERSECOND_TYPE",
    "single",
    ["single", "sentinel", "cluster"] as const,
    "single, sentinel or cluster",
  ),
  redisPerSecondUrl: str(
    "REDIS_PERSECOND_URL",
    "/var/run/nutcracker/ratelimitpersecond.sock",
    "per-second address",
  ),
  redisPerSecondPoolSize: int("REDIS_PERSECOND_POOL_SIZE", 10, "per-second connections", 1),
  redisPerSecondAuth: str("REDIS_PERSECOND_AUTH", "", "per-second password or user:password", {
    secret: true,
  }),
  redisPerSecondTls: bool("REDIS_PERSECOND_TLS", false, "TLS to the per-second Redis (REDIS_TLS_* files)"),
  redisPerSecondSentinelAuth: str("REDIS_PERSECOND_SENTINEL_AUTH", "", "per-second sentinel auth", {
    secret: true,
  }),
  redisPerSecondPipelineWindowMs: durationMs(
    "REDIS_PERSECOND_PIPELINE_WINDOW",
    "0",
    "per-second batch window",
  ),
  redisPerSecondPipelineLimit: int("REDIS_PERSECOND_PIPELINE_LIMIT", 0, "per-second batch size limit", 0),
  redisPerSecondClusterPipelineParallelism: int(
    "REDIS_PERSECOND_CLUSTER_PIPELINE_PARALLELISM",
    1,
    "per-second cluster parallelism",
    0,
  ),
  redisPerSecondTimeoutMs: durationMs("REDIS_PERSECOND_TIMEOUT", "10s", "per-second timeout"),
  redisPerSecondPoolOnEmptyBehavior: oneOf(
    "REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR",
    "WAIT",
    ["WAIT"] as const,
    "only WAIT",
  ),

  // Memcached (also ALTCACHE_*)
  memcacheHostPort: list("MEMCACHE_HOST_PORT", "host:port list (same order on every replica)"),
  memcacheSrv: str("MEMCACHE_SRV", "", "SRV name _service._proto.name (exclusive with MEMCACHE_HOST_PORT)"),
  memcacheSrvRefreshMs: durationMs("MEMCACHE_SRV_REFRESH", "0", "re-resolve SRV this often; 0 = never"),
  memcacheMaxIdleConns: int("MEMCACHE_MAX_IDLE_CONNS", 2, "idle connections per node", 0),
  memcacheTls: bool("MEMCACHE_TLS", false, "TLS to memcached"),
  memcacheTlsClientCert: str("MEMCACHE_TLS_CLIENT_CERT", "", "client certificate file"),
  memcacheTlsClientKey: str("MEMCACHE_TLS_CLIENT_KEY", "", "client key file"),
  memcacheTlsCacert: str("MEMCACHE_TLS_CACERT", "", "CA file"),
  memcacheTlsSkipHostnameVerification: bool(
    "MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION",
    false,
    "verify chain only",
  ),

  // Tracing
  tracingEnabled: bool("TRACING_ENABLED", false, "export OpenTelemetry spans"),
  tracingServiceName: str("TRACING_SERVICE_NAME", "RateLimit", "service.name"),
  tracingServiceNamespace: str("TRACING_SERVICE_NAMESPACE", "", "service.namespace"),
  tracingServiceInstanceId: str(
    "TRACING_SERVICE_INSTANCE_ID",
    "",
    "service.instance.id; random UUID if empty",
  ),
  tracingExporterProtocol: oneOf(
    "TRACING_EXPORTER_PROTOCOL",
    "http",
    ["http", "", "grpc"] as const,
    "http or grpc",
  ),
  tracingSamplingRate: float("TRACING_SAMPLING_RATE", 1, "fraction of traces sampled", 0, 1),

  // Users and migrations APIs (ratelimitd)
  databaseUrl: custom(
    "DATABASE_URL",
    DEFAULT_DATABASE_URL,
    { kind: "sqlite", path: "./data/ratelimitd.db" } as DatabaseLocation,
    parseDatabaseLocation,
    "ratelimitd: users/migrations database, sqlite:<file> or postgres://…",
    { secret: true },
  ),
  databaseMaxConnections: int("DATABASE_MAX_CONNECTIONS", 10, "ratelimitd: PostgreSQL pool size", 1, 1000),
  usersBasePath: str("USERS_BASE_PATH", "", "ratelimitd: prefix of the users routes, e.g. /api"),
  usersMaxBodyBytes: int("USERS_MAX_BODY_BYTES", 65536, "ratelimitd: largest users request body", 1, 1 << 26),
  usersRequireAuth: bool(
    "USERS_REQUIRE_AUTH",
    false,
    "ratelimitd: users API needs Basic auth of a manage_options user",
  ),
  usersPasswordScryptLogN: int(
    "USERS_PASSWORD_SCRYPT_LOG_N",
    15,
    "ratelimitd: scrypt cost of new password hashes, log2 N",
    10,
    20,
  ),
  usersPasswordHashQueue: int(
    "USERS_PASSWORD_HASH_QUEUE",
    32,
    "ratelimitd: password hashes that may wait for a hashing thread (beyond: 503)",
    0,
    100_000,
  ),
  migrationsHookPrefix: str(
    "MIGRATIONS_HOOK_PREFIX",
    "ratelimitd",
    "ratelimitd: namespace of the migrations routes (/{prefix}/migrations/v1)",
  ),
  migrationsDir: str("MIGRATIONS_DIR", "", "ratelimitd: directory of operator migration modules (.js/.mjs)"),
  migrationsWorker: bool("MIGRATIONS_WORKER", true, "ratelimitd: run migration batches in this process"),
  migrationsPollIntervalMs: durationMs(
    "MIGRATIONS_POLL_INTERVAL",
    "1s",
    "ratelimitd: how often idle workers look for jobs",
  ),
  migrationsJobLeaseMs: durationMs("MIGRATIONS_JOB_LEASE", "60s", "ratelimitd: lease of a running batch job"),
  migrationsRetryBaseMs: durationMs(
    "MIGRATIONS_RETRY_BASE",
    "30s",
    "ratelimitd: first retry delay of a failed batch",
  ),
  migrationsRetryMaxMs: durationMs("MIGRATIONS_RETRY_MAX", "6h", "ratelimitd: longest retry delay"),
  adminEmail: str("ADMIN_EMAIL", "", "ratelimitd: bootstrap this user as administrator at start-up"),
  adminAppPassword: str("ADMIN_APP_PASSWORD", "", "ratelimitd: application password of ADMIN_EMAIL", {
    secret: true,
  }),
  authFailuresPerMinute: int(
    "AUTH_FAILURES_PER_MINUTE",
    10,
    "ratelimitd: failed authentications per client address per minute",
    1,
    1_000_000,
  ),
} as const satisfies Record<string, SettingSpec<unknown>>;

type ValueOf<S> = S extends SettingSpec<infer T> ? T : never;

/** Settings read straight from the table. */
export type TableSettings = {
  readonly [K in keyof typeof SETTINGS_TABLE]: ValueOf<(typeof SETTINGS_TABLE)[K]>;
};
