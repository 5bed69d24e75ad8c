// The image runs where Envoy Gateway deploys envoyproxy/ratelimit (README, "Use with Envoy Gateway"): the
// daemon is started through the image's `/bin/ratelimit` (a symlink to the compiled `cmd/ratelimit.ts`, with the
// extra arguments Envoy AI Gateway passes), in the environment Envoy Gateway's
// internal/infrastructure/kubernetes/ratelimit/resource.go gives it — only file paths and ports are moved
// to the test's own. Rules come from an xDS control plane over mTLS both ways, Envoy's calls arrive over
// mTLS, counters live in the test's own redis-server, and Prometheus is scraped on PROMETHEUS_ADDR through a
// statsd-exporter mapping file (test/fixtures/envoy-gateway/gateway-dashboard-mapping.yaml, written for this
// test) that yields the series Envoy Gateway's dashboards query, with the mapping features Envoy Gateway's
// own file uses.
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import t from "tap";
import type { RateLimitResponse } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import {
  type RateLimitConfig,
  RateLimitConfigSchema,
} from "../../src/gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";
import { RulesManagementServer } from "../../src/xds-server/rules-management-server.js";
import { distEntry, startDaemon } from "../helpers/daemon-process.js";
import { freePort } from "../helpers/free-port.js";
import { shouldRateLimitWith, tlsCredentials } from "../helpers/grpc-tls-client.js";
import { httpRequest } from "../helpers/http-request.js";
import { parsePrometheusText, seriesValue } from "../helpers/prometheus-text.js";
import { makeTempDir, removeTempDir } from "../helpers/redis-process.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";
import { generateCertificates } from "../helpers/tls-certificates.js";
import { stayInsideWindow } from "../helpers/window-guard.js";
import { eventually } from "../helpers/xds-fixtures.js";

const MAPPING = fileURLToPath(
  new URL("../fixtures/envoy-gateway/gateway-dashboard-mapping.yaml", import.meta.url),
);
const HOUR = 4;

/** A rule as Envoy Gateway's xDS translator writes one: route descriptor, then the match, limited per hour. */
function gatewayRule(domain: string, route: string, requests: number): RateLimitConfig {
  return create(RateLimitConfigSchema, {
    name: domain,
    domain,
    descriptors: [
      {
        key: route,
        value: route,
        descriptors: [
          {
            key: "rule-0-match-0",
            value: "rule-0-match-0",
            rateLimit: { requestsPerUnit: requests, unit: HOUR },
          },
        ],
      },
    ],
  });
}

function request(domain: string, route: string) {
  return {
    domain,
    descriptors: [
      {
        entries: [
          { key: route, value: route },
          { key: "rule-0-match-0", value: "rule-0-match-0" },
        ],
      },
    ],
  };
}

/** Overall code and each status's code and remaining count (1 = OK, 2 = OVER_LIMIT). */
function decision(response: RateLimitResponse) {
  return [response.overallCode, ...response.statuses.map((s) => [s.code, s.limitRemaining])];
}

if (requireBinaries(t, ["redis-server", "redis-cli", "openssl"])) {
  t.test("Envoy Gateway's deployment: xDS over mTLS, mTLS clients, Redis, Prometheus", async (t) => {
    const dir = makeTempDir("envoy-gateway");
    t.teardown(() => removeTempDir(dir));
    mkdirSync(join(dir, "certs"));
    const certs = await generateCertificates(join(dir, "certs"));
    // The image's /bin/ratelimit, and its working directory (the default SQLite file goes under it).
    mkdirSync(join(dir, "bin"));
    mkdirSync(join(dir, "app"));
    symlinkSync(distEntry("ratelimit"), join(dir, "bin", "ratelimit"));
    const redis = await startRedis(t);

    const controlPlane = new RulesManagementServer();
    const xdsPort = await controlPlane.listen("127.0.0.1", 0, {
      certFile: certs.serverCert,
      keyFile: certs.serverKey,
      caFile: certs.caCert,
      requireClientCert: true,
    });
    t.teardown(() => controlPlane.close());
    const prometheusPort = await freePort();

    // Envoy Gateway uses one secret for both sides: /certs/tls.crt, tls.key, ca.crt.
    const env = {
      RUNTIME_ROOT: "/data",
      RUNTIME_SUBDIRECTORY: "ratelimit",
      RUNTIME_IGNOREDOTFILES: "true",
      RUNTIME_WATCH_ROOT: "false",
      LOG_LEVEL: "info",
      USE_STATSD: "false",
      CONFIG_TYPE: "GRPC_XDS_SOTW",
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${xdsPort}`,
      CONFIG_GRPC_XDS_NODE_ID: "envoy-ratelimit",
      GRPC_SERVER_USE_TLS: "true",
      GRPC_SERVER_TLS_CERT: certs.serverCert,
      GRPC_SERVER_TLS_KEY: certs.serverKey,
      GRPC_SERVER_TLS_CA_CERT: certs.caCert,
      CONFIG_GRPC_XDS_SERVER_USE_TLS: "true",
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: certs.serverCert,
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: certs.serverKey,
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: certs.caCert,
      FORCE_START_WITHOUT_INITIAL_CONFIG: "true",
      REDIS_SOCKET_TYPE: "tcp",
      REDIS_URL: redis.url,
      USE_PROMETHEUS: "true",
      PROMETHEUS_ADDR: `:${prometheusPort}`,
      PROMETHEUS_MAPPER_YAML: MAPPING,
      // Ports the test chooses (Envoy Gateway's are 8080, 8081 and 6070, the defaults).
      PORT: "0",
      GRPC_PORT: "0",
      DEBUG_PORT: "0",
    };
    const daemon = await startDaemon(env, 20_000, {
      baseEnv: {},
      cwd: join(dir, "app"),
      entry: join(dir, "bin", "ratelimit"),
      args: ["--extra-flag", "from-ai-gateway"],
    });
    t.teardown(() => daemon.stop());

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

    const address = `127.0.0.1:${daemon.grpcPort}`;
    const envoy = tlsCredentials({ ca: certs.caCert, cert: certs.clientCert, key: certs.clientKey });
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
    t.notOk(families.has("go_memstats_gc_cpu_fraction"), "no Go runtime metrics (README says so)");

    t.equal(await daemon.stop(), 0, "SIGTERM stops it cleanly");
  });
}
