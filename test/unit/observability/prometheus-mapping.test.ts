// The statsd_exporter mapping (docs/production.md "Metrics: Prometheus and DogStatsD"): the reference's built-in mapping
// gives its metric names and labels; custom mapping files (PROMETHEUS_MAPPER_YAML) use globs, regexes, types,
// buckets and drops.
import t from "tap";
import {
  DEFAULT_PROMETHEUS_MAPPING,
  RESPONSE_TIME_SCALE_LINE,
} from "../../../src/observability/default-prometheus-mapping.js";
import {
  DEFAULT_BUCKETS,
  escapeMetricName,
  PrometheusMapping,
  type StatKind,
} from "../../../src/observability/prometheus-mapping.js";

function parsed(text: string): PrometheusMapping {
  const result = PrometheusMapping.parse(text);
  if (!result.ok) throw new Error(result.reason);
  return result.value;
}

const builtIn = parsed(DEFAULT_PROMETHEUS_MAPPING);
const nameAndLabels = (mapping: PrometheusMapping, stat: string, kind: StatKind = "counter") => {
  const series = mapping.map(stat, kind);
  return series && { name: series.name, labels: series.labels };
};

t.test("built-in mapping: rule stats get domain, key1 and key2", async (t) => {
  const cases: [string, string, Record<string, string>][] = [
    [
      "ratelimit.service.rate_limit.mongo_cps.database_users.total_hits",
      "ratelimit_service_rate_limit_total_hits",
      { domain: "mongo_cps", key1: "database_users" },
    ],
    [
      "ratelimit.service.rate_limit.d.k_v.over_limit",
      "ratelimit_service_rate_limit_over_limit",
      { domain: "d", key1: "k_v" },
    ],
    [
      "ratelimit.service.rate_limit.d.a_x.b.near_limit",
      "ratelimit_service_rate_limit_near_limit",
      { domain: "d", key1: "a_x", key2: "b" },
    ],
    [
      "ratelimit.service.rate_limit.d.a_x.b.c_z.within_limit",
      "ratelimit_service_rate_limit_within_limit",
      { domain: "d", key1: "a_x", key2: "b" },
    ],
    [
      "ratelimit.service.rate_limit.d.k.shadow_mode",
      "ratelimit_service_rate_limit_shadow_mode",
      { domain: "d", key1: "k" },
    ],
    [
      "ratelimit.service.call.should_rate_limit.redis_error",
      "ratelimit_service_should_rate_limit_error",
      { err_type: "redis_error" },
    ],
    ["ratelimit_server.Check.total_requests", "ratelimit_service_total_requests", { grpc_method: "Check" }],
    ["ratelimit.service.config_load_success", "ratelimit_service_config_load_success", {}],
    ["ratelimit.service.config_load_error", "ratelimit_service_config_load_error", {}],
  ];
  for (const [stat, name, labels] of cases)
    t.strictSame(nameAndLabels(builtIn, stat), { name, labels }, stat);
});

t.test("built-in mapping: unmapped stats keep their name, escaped as statsd_exporter does", async (t) => {
  const cases: [string, string][] = [
    [
      "ratelimit.service.rate_limit.d.k.over_limit_with_local_cache",
      "ratelimit_service_rate_limit_d_k_over_limit_with_local_cache",
    ],
    ["ratelimit.service.rate_limit.d.domain_not_found", "ratelimit_service_rate_limit_d_domain_not_found"],
    ["ratelimit.redis_pool.cx_active", "ratelimit_redis_pool_cx_active"],
  ];
  for (const [stat, name] of cases) t.strictSame(nameAndLabels(builtIn, stat, "gauge"), { name, labels: {} });
  t.equal(escapeMetricName("1st.metric-name:x"), "_1st_metric_name:x");
});

t.test(
  "built-in mapping: the response-time histogram in seconds, or milliseconds without the scale",
  async (t) => {
    const seconds = builtIn.map("ratelimit_server.ShouldRateLimit.response_time", "timer");
    t.strictSame(seconds, {
      name: "ratelimit_service_response_time_seconds",
      labels: { grpc_method: "ShouldRateLimit" },
      help: undefined,
      observer: "histogram",
      buckets: DEFAULT_BUCKETS,
      scale: 0.001,
    });
    t.ok(DEFAULT_PROMETHEUS_MAPPING.includes(RESPONSE_TIME_SCALE_LINE), "the line the setting removes");
    const milliseconds = parsed(DEFAULT_PROMETHEUS_MAPPING.replace(RESPONSE_TIME_SCALE_LINE, ""));
    t.equal(milliseconds.map("ratelimit_server.ShouldRateLimit.response_time", "timer")?.scale, 1);
    t.equal(
      builtIn.map("ratelimit_server.ShouldRateLimit.total_requests", "timer")?.name,
      "ratelimit_server_ShouldRateLimit_total_requests",
      "match_metric_type: counter does not catch timers",
    );
  },
);

t.test("custom mapping: regex, glob, drop, types, buckets, help and defaults", async (t) => {
  const custom = parsed(`
defaults:
  observer_type: histogram
  histogram_options: { buckets: [1, 0.1] }
mappings:
  - match: "noisy.*"
    action: drop
  - match: "^svc\\\\.(\\\\w+)\\\\.latency$"
    match_type: regex
    name: "svc_latency_\${1}_seconds"
    help: "Latency of a service"
    scale: 0.001
    labels: { service: "$1", literal: "$$1" }
  - match: "app.*.hits"
    match_metric_type: gauge
    name: "app_hits_gauge"
  - match: "app.*.hits"
    name: "app_hits"
    labels: { app: "$1" }
`);
  t.equal(custom.map("noisy.thing", "counter"), undefined, "dropped");
  t.strictSame(custom.map("svc.api.latency", "timer"), {
    name: "svc_latency_api_seconds",
    labels: { service: "api", literal: "$1" },
    help: "Latency of a service",
    observer: "histogram",
    buckets: [0.1, 1],
    scale: 0.001,
  });
  t.strictSame(nameAndLabels(custom, "app.web.hits", "gauge"), { name: "app_hits_gauge", labels: {} });
  t.strictSame(nameAndLabels(custom, "app.web.hits", "counter"), {
    name: "app_hits",
    labels: { app: "web" },
  });
  t.strictSame(
    nameAndLabels(custom, "app.web.extra.hits", "counter"),
    {
      name: "app_web_extra_hits",
      labels: {},
    },
    "a glob star never spans a dot",
  );
});

t.test("invalid mapping files name the problem", async (t) => {
  const cases: [string, string][] = [
    ["- a list", "the mapping file is not a YAML map"],
    ["mappings: {}", "mappings: not a list"],
    ["mappings:\n  - name: x", "mappings[0]: match is required"],
    ['mappings:\n  - match: "a.*"', "mappings[0]: name is required"],
    ['mappings:\n  - match: "a"\n    name: b\n    match_type: fuzzy', "mappings[0]: unknown match_type"],
    [
      'mappings:\n  - match: "a"\n    name: b\n    labels: { "bad-label": x }',
      'mappings[0]: invalid label name "bad-label"',
    ],
    [
      'mappings:\n  - match: "a"\n    name: b\n    timer_type: bar',
      'mappings[0]: unknown observer_type "bar"',
    ],
    [
      'mappings:\n  - match: "a"\n    name: b\n    match_metric_type: set',
      'mappings[0]: unknown match_metric_type "set"',
    ],
    [
      'mappings:\n  - match: "a"\n    name: b\n    histogram_options: { buckets: [x] }',
      "mappings[0]: histogram_options.buckets must be a list of numbers",
    ],
    ['mappings:\n  - match: "a"\n    name: b\n    scale: big', "mappings[0]: scale is not a number"],
  ];
  for (const [text, reason] of cases)
    t.strictSame(PrometheusMapping.parse(text), { ok: false, reason }, reason);
});
