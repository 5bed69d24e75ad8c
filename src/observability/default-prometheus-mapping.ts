/**
 * The reference's built-in statsd_exporter mapping (`src/prometheusstats/default_mapper.yaml`), used when
 * PROMETHEUS_MAPPER_YAML is empty: rule stats of 2-segment keys get `domain`/`key1`, deeper keys
 * `domain`/`key1`/`key2` (further segments dropped), errors `err_type`, server stats `grpc_method`, and the
 * response-time histogram is scaled from milliseconds to seconds. Two mappings of ours follow the
 * reference's, for stats only ratelimitd has (docs/outages.md).
 */
export const DEFAULT_PROMETHEUS_MAPPING = `mappings:
${ruleStats()}
  - match: "ratelimit.service.call.should_rate_limit.*"
    name: "ratelimit_service_should_rate_limit_error"
    match_metric_type: counter
    labels:
      err_type: "$1"

  - match: "ratelimit_server.*.total_requests"
    name: "ratelimit_service_total_requests"
    match_metric_type: counter
    labels:
      grpc_method: "$1"

  - match: "ratelimit_server.*.response_time"
    name: "ratelimit_service_response_time_seconds"
    timer_type: histogram
    scale: 0.001
    labels:
      grpc_method: "$1"

  - match: "ratelimit.service.backend_failure.*"
    name: "ratelimit_service_backend_failure"
    match_metric_type: counter
    labels:
      mode: "$1"
  - match: "ratelimit.backend.breaker_open"
    name: "ratelimit_backend_breaker_open"
    match_metric_type: gauge

  - match: "ratelimit.service.config_load_success"
    name: "ratelimit_service_config_load_success"
    match_metric_type: counter
  - match: "ratelimit.service.config_load_error"
    name: "ratelimit_service_config_load_error"
    match_metric_type: counter
`;

/** The `scale` line PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS removes, as the reference does. */
export const RESPONSE_TIME_SCALE_LINE = "    scale: 0.001\n";

function ruleStats(): string {
  const stats = ["near_limit", "over_limit", "total_hits", "within_limit", "shadow_mode"];
  const twoSegments = stats.map(
    (stat) => `  - match: "ratelimit.service.rate_limit.*.*.${stat}"
    name: "ratelimit_service_rate_limit_${stat}"
    timer_type: "histogram"
    labels:
      domain: "$1"
      key1: "$2"
`,
  );
  const deeper = stats.map(
    (
      stat,
    ) => `  - match: "^ratelimit\\\\.service\\\\.rate_limit\\\\.([^.]*)\\\\.([^.]*)\\\\.([^.]*)\\\\.(?:.*\\\\.)?${stat}$"
    match_type: regex
    name: "ratelimit_service_rate_limit_${stat}"
    timer_type: "histogram"
    labels:
      domain: "$1"
      key1: "$2"
      key2: "$3"
`,
  );
  return [...twoSegments, ...deeper].join("");
}
