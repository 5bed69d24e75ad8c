// Prometheus (docs/production.md "Metrics: Prometheus and DogStatsD"): after a known sequence of decisions, /metrics —
// on the debug port and on PROMETHEUS_ADDR/PROMETHEUS_PATH — parses as Prometheus text and holds the
// reference's metric names and labels (its default statsd_exporter mapping) with exactly the counts the
// decisions produced.
import t, { type Test } from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { freePort } from "../helpers/free-port.js";
import { httpRequest } from "../helpers/http-request.js";
import { parsePrometheusText, type Sample, samplesOf, seriesValue } from "../helpers/prometheus-text.js";

const RULES = `domain: prom
descriptors:
  - key: k
    rate_limit: { unit: hour, requests_per_unit: 3 }
  - key: a
    value: x
    descriptors:
      - key: b
        rate_limit: { unit: hour, requests_per_unit: 100 }
        descriptors:
          - key: c
            rate_limit: { unit: hour, requests_per_unit: 100 }
`;
const dir = t.testdir({ config: { "rules.yaml": RULES } });
const prometheusPort = await freePort();
const daemon = await startDaemon({
  RUNTIME_ROOT: dir,
  USE_PROMETHEUS: "true",
  PROMETHEUS_ADDR: `127.0.0.1:${prometheusPort}`,
  PROMETHEUS_PATH: "/prom",
  EXTRA_TAGS: "cluster:east",
});
t.teardown(() => daemon.stop());
const rls = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
t.teardown(() => rls.close());

// The sequence: 5 hits on a limit of 3 (N = floor(3 × 0.8) = 2: within 3, near 1, over 2); 2 hits on
// prom.a_x.b; 1 hit on prom.a_x.b.c; one refused request (empty domain).
for (let i = 0; i < 5; i++)
  await rls.shouldRateLimit({ domain: "prom", descriptors: [{ entries: [{ key: "k", value: "v" }] }] });
const ab = [
  { key: "a", value: "x" },
  { key: "b", value: "y" },
];
for (let i = 0; i < 2; i++) await rls.shouldRateLimit({ domain: "prom", descriptors: [{ entries: ab }] });
await rls.shouldRateLimit({ domain: "prom", descriptors: [{ entries: [...ab, { key: "c", value: "z" }] }] });
await rls.shouldRateLimit({ domain: "", descriptors: [] }).catch(() => {});
const CALLS = 9;

const scrape = async (port: number, path: string) => {
  const reply = await httpRequest(port, path);
  t.equal(reply.status, 200, `${path} answers`);
  t.equal(reply.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  return { families: parsePrometheusText(reply.body), samples: samplesOf(reply.body) };
};

for (const [where, port, path] of [
  ["the debug port's /metrics", daemon.debugPort, "/metrics"],
  ["PROMETHEUS_ADDR and PROMETHEUS_PATH", prometheusPort, "/prom"],
] as const) {
  t.test(`${where}: exact values under the reference's names`, async (t) => {
    const { families, samples } = await scrape(port, path);
    const value = (family: string, labels: Record<string, string> = {}) =>
      seriesValue(families, family, { cluster: "east", ...labels });
    const two = { domain: "prom", key1: "k" };
    t.equal(value("ratelimit_service_rate_limit_total_hits", two), 5);
    t.equal(value("ratelimit_service_rate_limit_within_limit", two), 3);
    t.equal(value("ratelimit_service_rate_limit_near_limit", two), 1);
    t.equal(value("ratelimit_service_rate_limit_over_limit", two), 2);
    t.equal(value("ratelimit_service_rate_limit_shadow_mode", two), 0);
    // Deeper keys keep domain, key1 and key2: prom.a_x.b and prom.a_x.b.c share one series (2 + 1).
    const three = { domain: "prom", key1: "a_x", key2: "b" };
    t.equal(value("ratelimit_service_rate_limit_total_hits", three), 3);
    t.equal(value("ratelimit_service_rate_limit_within_limit", three), 3);
    t.equal(value("ratelimit_service_should_rate_limit_error", { err_type: "service_error" }), 1);
    t.equal(value("ratelimit_service_should_rate_limit_error", { err_type: "redis_error" }), 0);
    t.equal(value("ratelimit_service_total_requests", { grpc_method: "ShouldRateLimit" }), CALLS);
    t.equal(value("ratelimit_service_config_load_success"), 1);
    t.equal(value("ratelimit_service_config_load_error"), 0);
    t.equal(
      value("ratelimit_service_rate_limit_prom_k_over_limit_with_local_cache"),
      0,
      "unmapped: escaped name",
    );
    t.equal(families.get("ratelimit_service_rate_limit_total_hits")?.type, "COUNTER");
    t.equal(families.get("ratelimit_service_response_time_seconds")?.type, "HISTOGRAM");
    checkResponseTime(t, samples);
    t.equal(families.get("process_cpu_seconds_total")?.type, "COUNTER", "Node's process metrics");
  });
}

/** `ratelimit_service_response_time_seconds`: one ShouldRateLimit series, default buckets, CALLS observations. */
function checkResponseTime(t: Test, samples: Sample[]): void {
  const family = "ratelimit_service_response_time_seconds";
  const labels = { cluster: "east", grpc_method: "ShouldRateLimit" };
  const of = (suffix: string) => samples.filter((s) => s.name === `${family}${suffix}`);
  const buckets = of("_bucket");
  t.strictSame(
    buckets.map((s) => s.labels.le),
    ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"],
    "Prometheus' default buckets, in seconds, for one series",
  );
  t.strictSame(
    buckets.map(({ labels: { le: _le, ...rest } }) => rest),
    buckets.map(() => labels),
  );
  const counts = buckets.map((s) => s.value);
  t.strictSame(
    counts,
    [...counts].sort((a, b) => a - b),
    "cumulative",
  );
  t.equal(counts.at(-1), CALLS, "+Inf holds every call");
  t.strictSame(of("_count"), [{ name: `${family}_count`, labels, value: CALLS }]);
  const sum = of("_sum")[0]?.value ?? Number.NaN;
  t.ok(sum > 0 && sum < CALLS, `sum in seconds (${sum}), not milliseconds`);
}

t.test("other paths on PROMETHEUS_ADDR are not found", async (t) => {
  t.equal((await httpRequest(prometheusPort, "/metrics")).status, 404);
});

t.test("/ on the debug port lists /metrics", async (t) => {
  t.match((await httpRequest(daemon.debugPort, "/")).body, "/metrics: Prometheus metrics (text format)\n");
});
