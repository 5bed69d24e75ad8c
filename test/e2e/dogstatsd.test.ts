// DogStatsD (docs/production.md "Metrics: Prometheus and DogStatsD"): with USE_DOG_STATSD the flushed stats reach a
// DogStatsD server over UDP with EXTRA_TAGS and mogrifier tags, while Prometheus serves the same counts
// (several sinks at once, docs/compatibility.md).
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { freePort } from "../helpers/free-port.js";
import { httpRequest } from "../helpers/http-request.js";
import { parsePrometheusText, seriesValue } from "../helpers/prometheus-text.js";
import { startUdpListener } from "../helpers/udp-listener.js";

const RULES = "domain: dog\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 2 }\n";
const dir = t.testdir({ config: { "rules.yaml": RULES } });
const statsd = await startUdpListener();
t.teardown(() => statsd.close());
const prometheusPort = await freePort();
const daemon = await startDaemon({
  RUNTIME_ROOT: dir,
  USE_DOG_STATSD: "true",
  STATSD_HOST: "127.0.0.1",
  STATSD_PORT: String(statsd.port),
  STATS_FLUSH_INTERVAL: "100ms",
  EXTRA_TAGS: "env:test",
  USE_DOG_STATSD_MOGRIFIERS: "HITS",
  DOG_STATSD_MOGRIFIER_HITS_PATTERN: "^ratelimit\\.service\\.rate_limit\\.([^.]+)\\.(.*)\\.([^.]+)$",
  DOG_STATSD_MOGRIFIER_HITS_NAME: "ratelimit.service.rate_limit.$3",
  DOG_STATSD_MOGRIFIER_HITS_TAGS: "domain:$1,descriptor:$2",
  USE_PROMETHEUS: "true",
  PROMETHEUS_ADDR: `127.0.0.1:${prometheusPort}`,
});
t.teardown(() => daemon.stop());
const rls = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
t.teardown(() => rls.close());

// Three hits on a limit of 2 (N = 1): within 2, near 1, over 1.
for (let i = 0; i < 3; i++) {
  await rls.shouldRateLimit({ domain: "dog", descriptors: [{ entries: [{ key: "k", value: "v" }] }] });
}

/** The sum of the `|c` deltas received for `name` with exactly `tags`. */
const counted = (lines: readonly string[], name: string, tags: string) => {
  let total = 0;
  for (const line of lines) {
    const match = /^([^:]+):(\d+)\|c\|#(.*)$/.exec(line);
    if (match?.[1] === name && match[3] === tags) total += Number(match[2]);
  }
  return total;
};

t.test("rule stats: renamed and tagged by the mogrifier, with EXTRA_TAGS first", async (t) => {
  const tags = "env:test,domain:dog,descriptor:k";
  const expected = { total_hits: 3, within_limit: 2, near_limit: 1, over_limit: 1 };
  const totals = await statsd.waitFor("the rule counters", (lines) => {
    const got = Object.fromEntries(
      Object.keys(expected).map((stat) => [
        stat,
        counted(lines, `ratelimit.service.rate_limit.${stat}`, tags),
      ]),
    );
    return JSON.stringify(got) === JSON.stringify(expected) ? got : undefined;
  });
  t.strictSame(totals, expected);
});

t.test("server stats and timers keep their names, with EXTRA_TAGS as tags", async (t) => {
  const isTiming = (l: string) => l.startsWith("ratelimit_server.ShouldRateLimit.response_time:");
  const timings = await statsd.waitFor("the request counter and one timing per call", (lines) =>
    counted(lines, "ratelimit_server.ShouldRateLimit.total_requests", "env:test") === 3 &&
    lines.filter(isTiming).length >= 3
      ? lines.filter(isTiming)
      : undefined,
  );
  t.equal(timings.length, 3, "one timing per call");
  for (const line of timings)
    t.match(line, /^ratelimit_server\.ShouldRateLimit\.response_time:[0-9.]+\|ms\|#env:test$/);
  t.ok(
    statsd.lines.some((l) => /^ratelimit\.node\.rss_bytes:\d+\|g\|#env:test$/.test(l)),
    "gauges are sent as |g",
  );
});

t.test("Prometheus serves the same counts at the same time", async (t) => {
  const families = parsePrometheusText((await httpRequest(prometheusPort, "/metrics")).body);
  const labels = { env: "test", domain: "dog", key1: "k" };
  t.equal(seriesValue(families, "ratelimit_service_rate_limit_total_hits", labels), 3);
  t.equal(seriesValue(families, "ratelimit_service_rate_limit_over_limit", labels), 1);
});

t.test("no plain statsd lines: DogStatsD replaces the statsd sink on the same address", async (t) => {
  t.strictSame(
    statsd.lines.filter((l) => !l.includes("|#")),
    [],
    "every line carries DogStatsD tags",
  );
});
