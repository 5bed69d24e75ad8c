import t from "tap";
import { SettingsError } from "../../../src/errors.js";
import { aliasesOf, describeSettings, loadSettings } from "../../../src/settings/load-settings.js";
import { SETTINGS_TABLE } from "../../../src/settings/settings-table.js";
import { problemsOf } from "../../helpers/settings-problems.js";

// Values are parsed with the Go rules and land in typed fields.
t.test("set variables are parsed into typed settings", (t) => {
  const s = loadSettings({
    PORT: "0x1F90",
    GRPC_PORT: "9000",
    USE_STATSD: "F",
    SHADOW_MODE: "1",
    NEAR_LIMIT_RATIO: "0.9",
    STATS_FLUSH_INTERVAL: "1m30s",
    REDIS_TIMEOUT: "150ms",
    EXTRA_TAGS: "env:prod,az:a",
    MEMCACHE_HOST_PORT: "m1:11211,m2:11211",
    CACHE_KEY_PREFIX: "rl_",
  });
  t.equal(s.port, 8080);
  t.equal(s.grpcPort, 9000);
  t.equal(s.useStatsd, false);
  t.equal(s.shadowMode, true);
  t.equal(s.nearLimitRatio, 0.9);
  t.equal(s.statsFlushIntervalMs, 90_000);
  t.equal(s.redisTimeoutMs, 150);
  t.strictSame(s.extraTags, { env: "prod", az: "a" });
  t.strictSame(s.memcacheHostPort, ["m1:11211", "m2:11211"]);
  t.equal(s.cacheKeyPrefix, "rl_");
  t.end();
});

// Unknown variables are ignored; the result is frozen.
t.test("unknown variables are ignored and settings are frozen", (t) => {
  const s = loadSettings({ FOO: "bar", REDIS_BOGUS: "x", PORT: "8080" });
  t.ok(Object.isFrozen(s));
  t.throws(() => {
    (s as { port: number }).port = 1;
  }, TypeError);
  t.end();
});

// Any parse error is fatal at startup, as in the reference: one problem line per bad variable, naming
// variable and value.
t.test("parse errors name the variable and the value", (t) => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: "abc" }, 'invalid setting PORT="abc": not an integer'],
    [{ PORT: "" }, 'invalid setting PORT="": not an integer'],
    [{ PORT: "70000" }, 'invalid setting PORT="70000": must be between 0 and 65535'],
    [
      { LOCAL_CACHE_SIZE_IN_BYTES: "-1" },
      'invalid setting LOCAL_CACHE_SIZE_IN_BYTES="-1": must be at least 0',
    ],
    [
      { MEMORY_MAX_BYTES: "1048576" },
      'invalid setting MEMORY_MAX_BYTES="1048576": must be at least 16777216',
    ],
    [
      { MAX_DESCRIPTORS_PER_REQUEST: "0" },
      'invalid setting MAX_DESCRIPTORS_PER_REQUEST="0": must be at least 1',
    ],
    [
      { MAX_ENTRIES_PER_DESCRIPTOR: "0" },
      'invalid setting MAX_ENTRIES_PER_DESCRIPTOR="0": must be at least 1',
    ],
    [
      { MAX_DESCRIPTOR_ENTRY_BYTES: "0" },
      'invalid setting MAX_DESCRIPTOR_ENTRY_BYTES="0": must be at least 1',
    ],
    [{ USE_STATSD: "yes" }, 'invalid setting USE_STATSD="yes": not a boolean (use true or false)'],
    [{ USE_STATSD: "" }, 'invalid setting USE_STATSD="": not a boolean (use true or false)'],
    [{ NEAR_LIMIT_RATIO: "high" }, 'invalid setting NEAR_LIMIT_RATIO="high": not a number'],
    [
      { STATS_FLUSH_INTERVAL: "5" },
      'invalid setting STATS_FLUSH_INTERVAL="5": not a duration (use a number with a unit such as 500ms, 10s, 1h)',
    ],
    [{ REDIS_TIMEOUT: "10d" }, 'invalid setting REDIS_TIMEOUT="10d": unknown unit "d" in duration'],
    [{ REDIS_TIMEOUT: "-1s" }, 'invalid setting REDIS_TIMEOUT="-1s": must not be negative'],
    [
      { GRPC_MAX_CONCURRENT_STREAMS: "-1" },
      'invalid setting GRPC_MAX_CONCURRENT_STREAMS="-1": must be between 0 and 4294967295',
    ],
    [
      { GRPC_REQUEST_READ_TIMEOUT: "-5s" },
      'invalid setting GRPC_REQUEST_READ_TIMEOUT="-5s": must not be negative',
    ],
    [
      { EXTRA_TAGS: "env=prod" },
      'invalid setting EXTRA_TAGS="env=prod": invalid map item: "env=prod" (use k1:v1,k2:v2)',
    ],
    [
      { LOG_LEVEL: "loud" },
      'invalid setting LOG_LEVEL="loud": must be one of trace, debug, info, warn, warning, error, fatal, panic',
    ],
    [{ CONFIG_TYPE: "REST" }, 'invalid setting CONFIG_TYPE="REST": must be one of FILE, GRPC_XDS_SOTW'],
    [
      { BACKEND_TYPE: "mysql" },
      'invalid setting BACKEND_TYPE="mysql": must be one of redis, "", memcache, memory, kvstore (alias of redis), altcache (alias of memcache)',
    ],
    [{ REDIS_TYPE: "ring" }, 'invalid setting REDIS_TYPE="ring": must be one of single, sentinel, cluster'],
    [
      { REDIS_POOL_ON_EMPTY_BEHAVIOR: "CREATE" },
      'invalid setting REDIS_POOL_ON_EMPTY_BEHAVIOR="CREATE": must be one of WAIT',
    ],
    [
      { REDIS_POOL_ON_EMPTY_BEHAVIOR: "error" },
      'invalid setting REDIS_POOL_ON_EMPTY_BEHAVIOR="error": must be one of WAIT',
    ],
    [
      { LIMIT_RESPONSE_HEADERS_FORMAT: "draft-03" },
      'invalid setting LIMIT_RESPONSE_HEADERS_FORMAT="draft-03": must be one of legacy, ietf',
    ],
    [
      { TRACING_EXPORTER_PROTOCOL: "zipkin" },
      'invalid setting TRACING_EXPORTER_PROTOCOL="zipkin": must be one of http, "", grpc',
    ],
  ];
  for (const [env, line] of cases) t.strictSame(problemsOf(env), [line], JSON.stringify(env));
  // REDIS_CLUSTER_PIPELINE_PARALLELISM < 0 is fatal.
  const [parallelism] = problemsOf({ REDIS_CLUSTER_PIPELINE_PARALLELISM: "-1" });
  t.match(parallelism, /^invalid setting REDIS_CLUSTER_PIPELINE_PARALLELISM="-1": /);
  t.end();
});

t.test("all bad variables are reported together in one SettingsError", (t) => {
  const error = t.throws(() =>
    loadSettings({ PORT: "x", GRPC_PORT: "y", SHADOW_MODE: "maybe" }),
  ) as SettingsError;
  t.type(error, SettingsError);
  t.equal(error.code, "settings_invalid");
  t.strictSame(error.problems, [
    'invalid setting PORT="x": not an integer',
    'invalid setting GRPC_PORT="y": not an integer',
    'invalid setting SHADOW_MODE="maybe": not a boolean (use true or false)',
  ]);
  t.equal(error.message, error.problems.join("\n"));
  t.end();
});

// Enumerated settings match case-insensitively and keep the canonical spelling.
t.test("enum settings are case-insensitive", (t) => {
  const s = loadSettings({
    LOG_LEVEL: "DEBUG",
    CONFIG_TYPE: "grpc_xds_sotw",
    REDIS_TYPE: "Cluster",
    REDIS_SOCKET_TYPE: "TCP",
    REDIS_POOL_ON_EMPTY_BEHAVIOR: "wait",
    STATSD_PROTOCOL: "UDP",
    TRACING_EXPORTER_PROTOCOL: "GRPC",
  });
  t.equal(s.logLevel, "debug");
  t.equal(s.configType, "GRPC_XDS_SOTW");
  t.equal(s.redisType, "cluster");
  t.equal(s.redisSocketType, "tcp");
  t.equal(s.redisPoolOnEmptyBehavior, "WAIT");
  t.equal(s.statsdProtocol, "udp");
  t.equal(s.tracingExporterProtocol, "grpc");
  t.equal(loadSettings({ LOG_LEVEL: "Warning" }).logLevel, "warning");
  t.end();
});

// BACKEND_TYPE redis (default, also ""), memcache, memory; kvstore and altcache as aliases (README,
// "Settings").
t.test("BACKEND_TYPE selects settings.backend", (t) => {
  const cases: [string, string][] = [
    ["redis", "redis"],
    ["", "redis"],
    ["REDIS", "redis"],
    ["memcache", "memcache"],
    ["Memcache", "memcache"],
    ["memory", "memory"],
    ["MEMORY", "memory"],
    ["kvstore", "redis"],
    ["KVSTORE", "redis"],
    ["altcache", "memcache"],
    ["AltCache", "memcache"],
  ];
  for (const [text, backend] of cases)
    t.equal(loadSettings({ BACKEND_TYPE: text }).backend, backend, `"${text}"`);
  t.end();
});

// Alias spellings (README, "Settings"): KVSTORE_* = REDIS_*, ALTCACHE_* = MEMCACHE_*, LocalCacheSizeInBytes =
// LOCAL_CACHE_SIZE_IN_BYTES.
t.test("alias spellings are read when the canonical one is unset", (t) => {
  const s = loadSettings({
    KVSTORE_URL: "redis:6379",
    KVSTORE_PERSECOND_URL: "redis-ps:6379",
    KVSTORE_PIPELINE_WINDOW: "150us",
    KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: "true",
    KVSTORE_TYPE: "cluster",
    ALTCACHE_HOST_PORT: "m1:11211,m2:11211",
    ALTCACHE_MAX_IDLE_CONNS: "7",
    LocalCacheSizeInBytes: "1048576",
    GRPC_SERVER_TLS_CA_CERT: "/certs/ca.crt",
  });
  t.equal(s.redisUrl, "redis:6379");
  t.equal(s.redisPerSecondUrl, "redis-ps:6379");
  t.equal(s.redisPipelineWindowMs, 0.15);
  t.equal(s.redisHealthCheckActiveConnection, true);
  t.equal(s.redisType, "cluster");
  t.strictSame(s.memcacheHostPort, ["m1:11211", "m2:11211"]);
  t.equal(s.memcacheMaxIdleConns, 7);
  t.equal(s.localCacheSizeInBytes, 1_048_576);
  t.equal(s.grpcClientTlsCacert, "/certs/ca.crt", "Envoy Gateway's name for the client CA");
  t.strictSame(aliasesOf("REDIS_URL"), ["KVSTORE_URL"]);
  t.strictSame(aliasesOf("MEMCACHE_SRV"), ["ALTCACHE_SRV"]);
  t.strictSame(aliasesOf("LOCAL_CACHE_SIZE_IN_BYTES"), ["LocalCacheSizeInBytes"]);
  t.strictSame(aliasesOf("HOST"), []);
  t.end();
});

t.test("alias and canonical both set", (t) => {
  t.equal(
    loadSettings({ REDIS_URL: "r:6379", KVSTORE_URL: "r:6379" }).redisUrl,
    "r:6379",
    "same value is fine",
  );
  const conflicts: [Record<string, string>, string][] = [
    [
      { REDIS_URL: "a:6379", KVSTORE_URL: "b:6379" },
      "KVSTORE_URL and REDIS_URL are both set, to different values: set only one",
    ],
    [
      { MEMCACHE_HOST_PORT: "a:11211", ALTCACHE_HOST_PORT: "b:11211" },
      "ALTCACHE_HOST_PORT and MEMCACHE_HOST_PORT are both set, to different values: set only one",
    ],
    [
      { LOCAL_CACHE_SIZE_IN_BYTES: "1024", LocalCacheSizeInBytes: "2048" },
      "LocalCacheSizeInBytes and LOCAL_CACHE_SIZE_IN_BYTES are both set, to different values: set only one",
    ],
    [
      { GRPC_CLIENT_TLS_CACERT: "/a/ca.crt", GRPC_SERVER_TLS_CA_CERT: "/b/ca.crt" },
      "GRPC_SERVER_TLS_CA_CERT and GRPC_CLIENT_TLS_CACERT are both set, to different values: set only one",
    ],
  ];
  for (const [env, line] of conflicts)
    t.strictSame(problemsOf(env), [line], `error names both: ${Object.keys(env)}`);
  t.end();
});

t.test("a bad value under an alias names the alias the user set", (t) => {
  t.strictSame(problemsOf({ KVSTORE_POOL_SIZE: "ten" }), [
    'invalid setting KVSTORE_POOL_SIZE="ten": not an integer',
  ]);
  t.strictSame(problemsOf({ ALTCACHE_SRV_REFRESH: "5" }), [
    'invalid setting ALTCACHE_SRV_REFRESH="5": not a duration (use a number with a unit such as 500ms, 10s, 1h)',
  ]);
  t.end();
});

// Section 2 (REDIS_AUTH etc. are secrets): the settings dump for logs masks them.
t.test("describeSettings prints NAME=value per setting with secrets masked", (t) => {
  const lines = describeSettings(
    loadSettings({
      REDIS_AUTH: "hunter2",
      KVSTORE_SENTINEL_AUTH: "sentinel-pw",
      REDIS_PERSECOND_AUTH: "user:ps-pw",
      REDIS_PERSECOND_SENTINEL_AUTH: "ps-sentinel-pw",
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "authorization:Bearer-xyz",
      PORT: "9999",
    }),
  );
  t.equal(lines.length, Object.keys(SETTINGS_TABLE).length);
  for (const env of [
    "REDIS_AUTH",
    "REDIS_SENTINEL_AUTH",
    "REDIS_PERSECOND_AUTH",
    "REDIS_PERSECOND_SENTINEL_AUTH",
    "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS",
  ]) {
    t.ok(lines.includes(`${env}=*****`), `${env} masked`);
  }
  const all = lines.join("\n");
  for (const secret of ["hunter2", "sentinel-pw", "ps-pw", "Bearer-xyz"])
    t.notOk(all.includes(secret), `${secret} never shown`);
  t.ok(lines.includes("PORT=9999"));
  t.ok(lines.includes('HOST="0.0.0.0"'));
  t.ok(lines.includes("USE_STATSD=true"));
  t.ok(lines.includes("EXTRA_TAGS={}"));
  t.end();
});
