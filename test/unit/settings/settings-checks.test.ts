import t from "tap";
import { loadSettings } from "../../../src/settings/load-settings.js";
import { problemsOf } from "../../helpers/settings-problems.js";

// MEMCACHE_HOST_PORT and MEMCACHE_SRV are exclusive; SRV must look like _service._proto.name.
t.test("memcache host list and SRV name", (t) => {
  const both = ["Both MEMCACHE_HOST_PORT and MEMCACHE_SRV are set: set only one"];
  t.strictSame(
    problemsOf({ MEMCACHE_HOST_PORT: "m:11211", MEMCACHE_SRV: "_memcache._tcp.example.com" }),
    both,
  );
  t.strictSame(
    problemsOf({ ALTCACHE_HOST_PORT: "m:11211", ALTCACHE_SRV: "_memcache._tcp.example.com" }),
    ["Both ALTCACHE_HOST_PORT and ALTCACHE_SRV are set: set only one"],
    "aliases: the message names the spellings the user set",
  );
  t.strictSame(problemsOf({ MEMCACHE_SRV: "memcache.example.com" }), [
    'invalid setting MEMCACHE_SRV="memcache.example.com": use _service._proto.name',
  ]);
  t.equal(
    loadSettings({ MEMCACHE_SRV: "_memcache._tcp.example.com" }).memcacheSrv,
    "_memcache._tcp.example.com",
  );
  t.strictSame(loadSettings({ MEMCACHE_HOST_PORT: "m:11211" }).memcacheHostPort, ["m:11211"]);
  t.end();
});

// Sentinel REDIS_URL is "master,sentinel1,...": fewer than 2 items is fatal, with the reference's text.
const SENTINEL_TEXT =
  /Expected master name and a list of urls for the sentinels, in the format: <redis master name>,<sentinel1>,\.\.\.,<sentineln>/;

t.test("sentinel URLs need a master name and at least one sentinel", (t) => {
  const [single] = problemsOf({ REDIS_TYPE: "sentinel", REDIS_URL: "mymaster" });
  t.match(single, /^invalid setting REDIS_URL="mymaster": /, "names variable and value");
  t.match(single, SENTINEL_TEXT);
  const [byDefault] = problemsOf({ REDIS_TYPE: "SENTINEL" });
  t.match(byDefault, /^invalid setting REDIS_URL="\/var\/run\/nutcracker\/ratelimit.sock": /);
  const [perSecond, ...rest] = problemsOf({
    REDIS_PERSECOND: "true",
    REDIS_PERSECOND_TYPE: "sentinel",
    REDIS_PERSECOND_URL: "m",
  });
  t.match(perSecond, /^invalid setting REDIS_PERSECOND_URL="m": /);
  t.match(perSecond, SENTINEL_TEXT);
  t.strictSame(rest, []);
  t.equal(
    loadSettings({ REDIS_TYPE: "sentinel", REDIS_URL: "mymaster,s1:26379" }).redisUrl,
    "mymaster,s1:26379",
  );
  t.equal(
    loadSettings({ REDIS_PERSECOND_TYPE: "sentinel", REDIS_PERSECOND_URL: "m" }).redisPerSecond,
    false,
    "unused per-second pool is not checked",
  );
  t.equal(
    loadSettings({ BACKEND_TYPE: "memory", REDIS_TYPE: "sentinel", REDIS_URL: "m" }).backend,
    "memory",
    "unused Redis is not checked",
  );
  t.end();
});

// TLS on the gRPC port needs both the certificate and the key.
t.test("GRPC_SERVER_USE_TLS needs certificate and key", (t) => {
  const missing = ["GRPC_SERVER_USE_TLS=true needs GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY"];
  t.strictSame(problemsOf({ GRPC_SERVER_USE_TLS: "true" }), missing);
  t.strictSame(problemsOf({ GRPC_SERVER_USE_TLS: "true", GRPC_SERVER_TLS_CERT: "/tls/cert.pem" }), missing);
  t.strictSame(problemsOf({ GRPC_SERVER_USE_TLS: "true", GRPC_SERVER_TLS_KEY: "/tls/key.pem" }), missing);
  const s = loadSettings({
    GRPC_SERVER_USE_TLS: "true",
    GRPC_SERVER_TLS_CERT: "/tls/cert.pem",
    GRPC_SERVER_TLS_KEY: "/tls/key.pem",
  });
  t.equal(s.grpcServerUseTls, true);
  t.strictSame(s.warnings, []);
  t.strictSame(loadSettings({ GRPC_CLIENT_TLS_CACERT: "/tls/ca.pem" }).warnings, [
    "GRPC_CLIENT_TLS_CACERT/GRPC_CLIENT_TLS_SAN have no effect without GRPC_SERVER_USE_TLS=true",
  ]);
  t.end();
});

// NEAR_LIMIT_RATIO is a ratio in [0, 1].
t.test("NEAR_LIMIT_RATIO must be within [0, 1]", (t) => {
  for (const text of ["1.5", "-0.1", "NaN", "inf"]) {
    t.strictSame(problemsOf({ NEAR_LIMIT_RATIO: text }), [
      `invalid setting NEAR_LIMIT_RATIO="${text}": must be between 0 and 1`,
    ]);
  }
  t.equal(loadSettings({ NEAR_LIMIT_RATIO: "0" }).nearLimitRatio, 0);
  t.equal(loadSettings({ NEAR_LIMIT_RATIO: "1" }).nearLimitRatio, 1);
  t.end();
});

// Backoff minimums must not exceed their maximums.
t.test("backoff intervals are ordered", (t) => {
  t.strictSame(problemsOf({ XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "2m" }), [
    "XDS_CLIENT_BACKOFF_INITIAL_INTERVAL must not exceed XDS_CLIENT_BACKOFF_MAX_INTERVAL",
  ]);
  t.strictSame(problemsOf({ REDIS_STARTUP_INITIAL_INTERVAL: "1s", REDIS_STARTUP_MAX_INTERVAL: "500ms" }), [
    "REDIS_STARTUP_INITIAL_INTERVAL must not exceed REDIS_STARTUP_MAX_INTERVAL",
  ]);
  t.equal(
    loadSettings({ XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "60s" }).xdsBackoffInitialIntervalMs,
    60_000,
    "equal is fine",
  );
  t.end();
});

// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT is Redis only: accepted with memcache, with a warning.
t.test("STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT with memcache warns", (t) => {
  const s = loadSettings({ BACKEND_TYPE: "memcache", STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: "true" });
  t.strictSame(s.warnings, [
    "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT is ignored by the memcache backend (as the reference)",
  ]);
  t.end();
});

// Several stats sinks at once are allowed (the reference's fatal combination is not copied).
t.test("several stats sinks may be enabled together", (t) => {
  const s = loadSettings({ USE_PROMETHEUS: "true", USE_DOG_STATSD: "true" });
  t.equal(s.useStatsd, true);
  t.equal(s.usePrometheus, true);
  t.equal(s.useDogStatsd, true);
  t.end();
});

// CONFIG_GRPC_XDS_NODE_METADATA is k1=v1,k2=v2, split at the first "=".
t.test("xDS node metadata", (t) => {
  t.strictSame(loadSettings({ CONFIG_GRPC_XDS_NODE_METADATA: "cluster=east,label=a=b" }).xdsNodeMetadataMap, {
    cluster: "east",
    label: "a=b",
  });
  t.strictSame(problemsOf({ CONFIG_GRPC_XDS_NODE_METADATA: "cluster:east" }), [
    'invalid setting CONFIG_GRPC_XDS_NODE_METADATA="cluster:east": item "cluster:east" is not k=v',
  ]);
  t.end();
});

// USE_DOG_STATSD_MOGRIFIERS=X reads DOG_STATSD_MOGRIFIER_X_PATTERN/_NAME (required) and _TAGS (map).
t.test("DogStatsD mogrifiers are read in order", (t) => {
  const s = loadSettings({
    USE_DOG_STATSD_MOGRIFIERS: "RULES,CALLS",
    DOG_STATSD_MOGRIFIER_RULES_PATTERN: "^ratelimit\\.service\\.rate_limit\\.([^.]+)\\.(.+)\\.([a-z_]+)$",
    DOG_STATSD_MOGRIFIER_RULES_NAME: "ratelimit.service.rate_limit.$3",
    DOG_STATSD_MOGRIFIER_RULES_TAGS: "domain:$1,descriptor:$2",
    DOG_STATSD_MOGRIFIER_CALLS_PATTERN: "^ratelimit_server\\.(.+)\\.total_requests$",
    DOG_STATSD_MOGRIFIER_CALLS_NAME: "ratelimit_server.total_requests",
  });
  t.strictSame(
    s.dogStatsdMogrifiers.map((m) => ({
      name: m.name,
      source: m.pattern.source,
      rename: m.rename,
      tags: m.tags,
    })),
    [
      {
        name: "RULES",
        source: "^ratelimit\\.service\\.rate_limit\\.([^.]+)\\.(.+)\\.([a-z_]+)$",
        rename: "ratelimit.service.rate_limit.$3",
        tags: { domain: "$1", descriptor: "$2" },
      },
      {
        name: "CALLS",
        source: "^ratelimit_server\\.(.+)\\.total_requests$",
        rename: "ratelimit_server.total_requests",
        tags: {},
      },
    ],
  );
  t.ok(
    s.dogStatsdMogrifiers[0]?.pattern.test(
      "ratelimit.service.rate_limit.mongo_cps.database_users.total_hits",
    ),
  );
  t.end();
});

t.test("mogrifier errors name the variable", (t) => {
  t.strictSame(problemsOf({ USE_DOG_STATSD_MOGRIFIERS: "X" }), [
    "DOG_STATSD_MOGRIFIER_X_PATTERN is required by USE_DOG_STATSD_MOGRIFIERS entry X",
    "DOG_STATSD_MOGRIFIER_X_NAME is required by USE_DOG_STATSD_MOGRIFIERS entry X",
  ]);
  // The reference's src/settings/settings.go reads the singular prefix; the README's plural spelling is not
  // read.
  t.strictSame(
    problemsOf({
      USE_DOG_STATSD_MOGRIFIERS: "X",
      DOG_STATSD_MOGRIFIERS_X_PATTERN: "^a$",
      DOG_STATSD_MOGRIFIER_X_NAME: "b",
    }),
    ["DOG_STATSD_MOGRIFIER_X_PATTERN is required by USE_DOG_STATSD_MOGRIFIERS entry X"],
  );
  const [badPattern, ...others] = problemsOf({
    USE_DOG_STATSD_MOGRIFIERS: "X",
    DOG_STATSD_MOGRIFIER_X_PATTERN: "(",
    DOG_STATSD_MOGRIFIER_X_NAME: "b",
  });
  t.match(badPattern, /^invalid setting DOG_STATSD_MOGRIFIER_X_PATTERN="\(": /);
  t.strictSame(others, []);
  t.strictSame(
    problemsOf({
      USE_DOG_STATSD_MOGRIFIERS: "X",
      DOG_STATSD_MOGRIFIER_X_PATTERN: "^a$",
      DOG_STATSD_MOGRIFIER_X_NAME: "b",
      DOG_STATSD_MOGRIFIER_X_TAGS: "k",
    }),
    ['invalid setting DOG_STATSD_MOGRIFIER_X_TAGS="k": invalid map item: "k" (use k1:v1,k2:v2)'],
  );
  t.end();
});
