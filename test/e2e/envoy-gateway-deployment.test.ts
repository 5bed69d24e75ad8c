// The image runs where Envoy Gateway deploys envoyproxy/ratelimit (docs/envoy-gateway-istio.md "Use with Envoy Gateway"): the
// daemon is started through the image's `/bin/ratelimit` (a symlink to the compiled `cmd/ratelimit.ts`, with the
// extra arguments Envoy AI Gateway passes), in the environment Envoy Gateway's
// internal/infrastructure/kubernetes/ratelimit/resource.go gives it — only file paths and ports are moved
// to the test's own (test/e2e/envoy-gateway-environment.ts). Rules come from an xDS control plane over mTLS
// both ways, Envoy's calls arrive over mTLS, counters live in the test's own redis-server, and Prometheus is
// scraped on PROMETHEUS_ADDR through a statsd-exporter mapping file
// (test/fixtures/envoy-gateway/gateway-dashboard-mapping.yaml, written for this test) that yields the series
// Envoy Gateway's dashboards query, with the mapping features Envoy Gateway's own file uses. What Envoy sends
// beyond plain counting is in test/e2e/envoy-gateway-requests.test.ts.
import t from "tap";
import { shouldRateLimitWith, tlsCredentials } from "../helpers/grpc-tls-client.js";
import { httpRequest } from "../helpers/http-request.js";
import { parsePrometheusText, seriesValue } from "../helpers/prometheus-text.js";
import { requireBinaries } from "../helpers/redis-servers.js";
import { stayInsideWindow } from "../helpers/window-guard.js";
import { eventually } from "../helpers/xds-fixtures.js";
import { decision, envoyGatewayEnvironment, gatewayRule, request } from "./envoy-gateway-environment.js";

if (requireBinaries(t, ["redis-server", "redis-cli", "openssl"])) {
  t.test("Envoy Gateway's deployment: xDS over mTLS, mTLS clients, Redis, Prometheus", async (t) => {
    const { certs, redis, controlPlane, envoy, startRatelimit } = await envoyGatewayEnvironment(t);
    const { daemon, address, prometheusPort } = await startRatelimit({}, ["--extra-flag", "from-ai-gateway"]);

    t.equal(
      (await httpRequest(daemon.httpPort, "/healthcheck")).status,
      200,
      "healthy before the first snapshot (FORCE_START_WITHOUT_INITIAL_CONFIG)",
    );
    t.match(
      daemon.logs().split("\n")[0],
      /level=warn(?:ing)? msg="ignoring command-line arguments \[\\"--extra-flag\\",\\"from-ai-gateway\\"\]: ratelimit reads its settings from environment variables only"/,
      "extra arguments: one warning, the first log line",
    );
    t.equal(controlPlane.received[0]?.nodeId, "envoy-ratelimit", "subscribed with Envoy Gateway's node id");

    const first = ["default/eg/http", "httproute/default/http-ratelimit/rule/0/match/0"] as const;
    const second = ["test-namespace/test-policy-1", "test-namespace/test-policy-1/rule/0"] as const;
    controlPlane.setSnapshot("v1", [
      gatewayRule(first[0], first[1], 3),
      gatewayRule(second[0], second[1], 2),
    ]);
    await eventually("v1 ACKed", () =>
      controlPlane.received.some((r) => r.versionInfo === "v1" && r.errorMessage === undefined),
    );

    await stayInsideWindow(3600, 10);
    const answers: unknown[] = [];
    for (let i = 0; i < 4; i++)
      answers.push(decision(await shouldRateLimitWith(address, envoy, request(...first))));
    answers.push(decision(await shouldRateLimitWith(address, envoy, request(...second))));
    t.strictSame(
      answers,
      [
        [1, [1, 2]],
        [1, [1, 1]],
        [1, [1, 0]],
        [2, [2, 0]],
        [1, [1, 1]],
      ],
      "decisions of both domains, counted in Redis",
    );
    t.ok(Number(await redis.cli("DBSIZE")) >= 2, "counters are in Redis");

    await t.rejects(
      shouldRateLimitWith(address, tlsCredentials({ ca: certs.caCert }), request(...first)),
      { code: 14 },
      "a client without a certificate is refused (UNAVAILABLE: the handshake fails)",
    );
    await t.rejects(
      shouldRateLimitWith(
        address,
        tlsCredentials({ ca: certs.caCert, cert: certs.otherClientCert, key: certs.otherClientKey }),
        request(...first),
      ),
      { code: 14 },
      "a client certificate from another CA is refused",
    );

    const scrape = await fetch(`http://127.0.0.1:${prometheusPort}/metrics`);
    t.equal(scrape.status, 200);
    const families = parsePrometheusText(await scrape.text());
    const labels = {
      domain: first[0],
      key1: `${first[1]}_${first[1]}`,
      key2: "rule-0-match-0_rule-0-match-0",
    };
    const rule = (name: string) => seriesValue(families, `ratelimit_service_rate_limit_${name}`, labels);
    t.strictSame(
      {
        total_hits: rule("total_hits"),
        over_limit: rule("over_limit"),
        near_limit: rule("near_limit"),
        within_limit: rule("within_limit"),
      },
      { total_hits: 4, over_limit: 1, near_limit: 1, within_limit: 3 },
      "the rule stats Envoy Gateway's dashboard queries, with its labels",
    );
    t.equal(
      seriesValue(families, "ratelimit_service_total_requests", { grpc_method: "ShouldRateLimit" }),
      5,
      "refused clients never reach ShouldRateLimit",
    );
    t.equal(seriesValue(families, "ratelimit_service_config_load_success"), 1);
    for (const name of ["process_resident_memory_bytes", "process_virtual_memory_bytes"])
      t.ok(families.has(name), `${name} (the dashboard's memory panels)`);
    t.notOk(
      families.has("go_memstats_gc_cpu_fraction"),
      "no Go runtime metrics (docs/envoy-gateway-istio.md says so)",
    );

    t.equal(await daemon.stop(), 0, "SIGTERM stops it cleanly");
  });
}
