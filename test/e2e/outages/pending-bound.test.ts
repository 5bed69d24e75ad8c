// BACKEND_MAX_PENDING (docs/outages.md): while Redis holds its clients (CLIENT PAUSE),
// at most that many decisions wait on it; the others are answered by the failure mode at once, counted and
// logged, and never reach Redis. The waiting ones are answered by Redis when the pause ends.
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { envoyRlsClient } from "../../helpers/envoy-rls-client.js";
import { httpRequest } from "../../helpers/http-request.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";

const RULES = "domain: p\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 100 }\n";
const REQUEST = { domain: "p", descriptors: [{ entries: [{ key: "k", value: "v" }] }] };
const statOf = (stats: string, name: string) =>
  Number(new RegExp(`^${name.replaceAll(".", "\\.")}: (\\d+)$`, "m").exec(stats)?.[1]);

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test(
    "allow, BACKEND_MAX_PENDING=2: eight of ten decisions answered without waiting on a paused Redis",
    async (t) => {
      const server = await startRedis(t);
      const daemon = await startDaemon({
        BACKEND_TYPE: "redis",
        REDIS_SOCKET_TYPE: "tcp",
        REDIS_URL: server.url,
        REDIS_TIMEOUT: "10s",
        BACKEND_FAILURE_MODE: "allow",
        BACKEND_MAX_PENDING: "2",
        LOG_LEVEL: "info",
        RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }),
      });
      t.teardown(() => daemon.stop());
      const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
      t.teardown(() => client.close());
      await stayInsideWindow(3600, 30);
      t.equal((await client.shouldRateLimit(REQUEST)).statuses[0]!.limit_remaining, 99);
      const key = `p_k_v_${Math.floor(Date.now() / 3_600_000) * 3600}`;

      await server.cli("CLIENT", "PAUSE", "2000", "ALL");
      const started = performance.now();
      const answered: { at: number; remaining: number }[] = [];
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          const response = await client.shouldRateLimit(REQUEST);
          t.equal(response.overall_code, "OK");
          answered.push({
            at: performance.now() - started,
            remaining: response.statuses[0]!.limit_remaining ?? 0,
          });
        }),
      );
      const fast = answered.filter((a) => a.at < 1500);
      t.equal(fast.length, 8, `answered at ${answered.map((a) => a.at.toFixed(0)).join(", ")} ms`);
      t.strictSame(
        fast.map((a) => a.remaining),
        Array(8).fill(99),
        "allow: the remaining of an empty window (100 − 1 hit)",
      );
      t.strictSame(
        answered
          .filter((a) => a.at >= 1500)
          .map((a) => a.remaining)
          .sort(),
        [97, 98],
        "the two that waited were counted by Redis",
      );
      t.equal(await server.cli("GET", key), "3");
      const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
      t.equal(statOf(stats, "ratelimit.service.backend_failure.allow"), 8);
      t.equal(
        statOf(stats, "ratelimit.backend.breaker_open"),
        0,
        "refusing beyond the bound is not a failure",
      );
      t.match(
        daemon.logs(),
        'level=warning msg="counter store failed (redis: unavailable (too many calls pending: 2 calls waiting, BACKEND_MAX_PENDING=2)), answered with failure mode allow"',
      );
    },
  );
}
