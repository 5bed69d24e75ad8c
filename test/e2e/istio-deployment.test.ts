// The image runs where Istio's samples/ratelimit/rate-limit-service.yaml runs envoyproxy/ratelimit (docs/envoy-gateway-istio.md,
// "Use with Istio"): `/bin/ratelimit` (a symlink to the compiled `cmd/ratelimit.ts`) with the sample's settings —
// rules from a ConfigMap mounted at /data/ratelimit/config (here a temporary directory laid out as the
// kubelet writes one, `..data` links included), Redis over TCP, no statsd, and every listener on `::`,
// reached over both IPv4 and IPv6.
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { distEntry, startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { makeTempDir, removeTempDir } from "../helpers/redis-process.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";
import { activeRules, writeConfigMap } from "../helpers/rules-dir.js";
import { stayInsideWindow } from "../helpers/window-guard.js";

// The sample's rules, per hour instead of per minute so that the test never straddles a window.
const CONFIG_YAML = `domain: ratelimit
descriptors:
  - key: PATH
    value: "/productpage"
    rate_limit:
      unit: hour
      requests_per_unit: 2
  - key: PATH
    rate_limit:
      unit: hour
      requests_per_unit: 100
`;

const path = (value: string) => ({
  domain: "ratelimit",
  descriptors: [{ entries: [{ key: "PATH", value }] }],
});

/** POST /json on `host` (a literal address, IPv6 in brackets): status and overall code. */
async function jsonDecision(host: string, port: number, value: string): Promise<[number, string]> {
  const reply = await fetch(`http://${host}:${port}/json`, {
    method: "POST",
    body: JSON.stringify(path(value)),
  });
  return [reply.status, ((await reply.json()) as { overallCode: string }).overallCode];
}

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("Istio's sample deployment: ConfigMap rules, Redis, dual stack", async (t) => {
    const dir = makeTempDir("istio");
    t.teardown(() => removeTempDir(dir));
    const configDir = join(dir, "data", "ratelimit", "config");
    mkdirSync(configDir, { recursive: true });
    writeConfigMap(configDir, "2026_11_25_10_00_00.000000001", { "config.yaml": CONFIG_YAML });
    mkdirSync(join(dir, "bin"));
    mkdirSync(join(dir, "app"));
    symlinkSync(distEntry("ratelimit"), join(dir, "bin", "ratelimit"));
    const redis = await startRedis(t);

    const daemon = await startDaemon(
      {
        REDIS_SOCKET_TYPE: "tcp",
        REDIS_URL: redis.url,
        USE_STATSD: "false",
        RUNTIME_ROOT: join(dir, "data"),
        RUNTIME_SUBDIRECTORY: "ratelimit",
        RUNTIME_WATCH_ROOT: "false",
        RUNTIME_IGNOREDOTFILES: "true",
        HOST: "::",
        GRPC_HOST: "::",
        // Ports the test chooses (the sample's are the defaults, 8080, 8081 and 6070).
        PORT: "0",
        GRPC_PORT: "0",
        DEBUG_PORT: "0",
      },
      20_000,
      { baseEnv: {}, cwd: join(dir, "app"), entry: join(dir, "bin", "ratelimit") },
    );
    t.teardown(() => daemon.stop());

    t.equal(
      await activeRules(daemon.debugPort),
      "ratelimit.PATH_/productpage: unit=HOUR requests_per_unit=2, shadow_mode: false, quota_mode: false\n" +
        "ratelimit.PATH: unit=HOUR requests_per_unit=100, shadow_mode: false, quota_mode: false\n",
      "the ConfigMap's rules, its ..data links and timestamped directory skipped as dotfiles",
    );

    await stayInsideWindow(3600, 10);
    const v4 = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
    const v6 = envoyRlsClient(`[::1]:${daemon.grpcPort}`);
    t.teardown(() => {
      v4.close();
      v6.close();
    });
    const grpcAnswers = [
      await v4.shouldRateLimit(path("/productpage")),
      await v6.shouldRateLimit(path("/productpage")),
      await v4.shouldRateLimit(path("/productpage")),
      await v6.shouldRateLimit(path("/reviews")),
    ].map((r) => [r.overall_code, r.statuses?.map((s) => s.limit_remaining ?? 0)]);
    t.strictSame(
      grpcAnswers,
      [
        ["OK", [1]],
        ["OK", [0]],
        ["OVER_LIMIT", [0]],
        ["OK", [99]],
      ],
      "gRPC over 127.0.0.1 and ::1 shares the counters in Redis",
    );
    t.strictSame(
      [
        await jsonDecision("127.0.0.1", daemon.httpPort, "/productpage"),
        await jsonDecision("[::1]", daemon.httpPort, "/productpage"),
        await jsonDecision("[::1]", daemon.httpPort, "/details"),
      ],
      [
        [429, "OVER_LIMIT"],
        [429, "OVER_LIMIT"],
        [200, "OK"],
      ],
      "/json over 127.0.0.1 and ::1",
    );
    t.equal((await fetch(`http://[::1]:${daemon.httpPort}/healthcheck`)).status, 200);
    t.equal(await daemon.stop(), 0, "SIGTERM stops it cleanly");
  });
}
