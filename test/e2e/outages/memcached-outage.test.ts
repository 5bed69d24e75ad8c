// The circuit breaker and the failure modes in front of memcached (docs/outages.md):
// the same breaker as Redis's. A frozen node (SIGSTOP) makes reads time out after memcached's 100 ms; two
// failed reads open the breaker, decisions are then answered by the failure mode without asking memcached,
// and a probe after the node resumes closes it. Mode error keeps the reference's fail-open reads, which
// test/e2e/memcached-decisions.test.ts covers.
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { envoyRlsClient } from "../../helpers/envoy-rls-client.js";
import { httpRequest } from "../../helpers/http-request.js";
import { requireBinaries, startMemcached } from "../../helpers/memcached-process.js";
import { pollUntil } from "../../helpers/redis-process.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";

const RULES = "domain: mc\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n";
const REQUEST = { domain: "mc", descriptors: [{ entries: [{ key: "k", value: "v" }] }] };
const statOf = (stats: string, name: string) =>
  Number(new RegExp(`^${name.replaceAll(".", "\\.")}: (\\d+)$`, "m").exec(stats)?.[1]);
const warnings = (logs: string) =>
  [...logs.matchAll(/level=warning msg="(counter store [^"]*)"/g)].map((m) =>
    m[1]!.replace(/\d+\.\d s/g, "N s"),
  );

if (requireBinaries(t, ["memcached"])) {
  t.test("deny: a frozen memcached node opens the breaker, a probe after it resumes closes it", async (t) => {
    const server = await startMemcached(t);
    t.teardown(() => server.resume());
    const daemon = await startDaemon({
      BACKEND_TYPE: "memcache",
      MEMCACHE_HOST_PORT: server.url,
      BACKEND_FAILURE_MODE: "deny",
      BACKEND_BREAKER_FAILURES: "2",
      BACKEND_BREAKER_COOLDOWN: "300ms",
      BACKEND_BREAKER_MAX_COOLDOWN: "300ms",
      LOG_LEVEL: "info",
      RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }),
    });
    t.teardown(() => daemon.stop());
    const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
    t.teardown(() => client.close());
    await stayInsideWindow(3600, 30);
    const stats = async () => (await httpRequest(daemon.debugPort, "/stats")).body;
    const answer = async () => {
      const response = await client.shouldRateLimit(REQUEST);
      return [response.overall_code, response.statuses[0]!.limit_remaining ?? 0];
    };

    t.strictSame(await answer(), ["OK", 4]);
    t.equal(statOf(await stats(), "ratelimit.backend.breaker_open"), 0);
    server.pause();
    const answers = [];
    const started = performance.now();
    for (let i = 0; i < 10; i++) answers.push(await answer());
    const elapsed = performance.now() - started;
    t.strictSame(
      answers,
      Array(10).fill(["OVER_LIMIT", 0]),
      "denied, whether memcached timed out or not asked",
    );
    // Two reads wait for memcached's 100 ms timeout; the eight others are answered without asking it.
    t.ok(elapsed < 1500, `10 decisions in ${elapsed.toFixed(0)} ms`);
    const during = await stats();
    t.equal(statOf(during, "ratelimit.backend.breaker_open"), 1);
    t.equal(statOf(during, "ratelimit.service.backend_failure.deny"), 10);
    t.equal(statOf(during, "ratelimit.service.call.should_rate_limit.redis_error"), 10);
    t.equal(
      statOf(during, "ratelimit.memcache.multiget.__code=error"),
      2,
      "only the two failed reads reached it",
    );
    t.equal((await httpRequest(daemon.httpPort, "/healthcheck")).status, 200, "healthy: mode deny answers");

    server.resume();
    const recovered = await pollUntil(
      "the breaker closed",
      async () => {
        const [code] = await answer();
        return code === "OK" ? true : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    t.ok(recovered);
    t.equal(statOf(await stats(), "ratelimit.backend.breaker_open"), 0);
    t.strictSame(
      await answer(),
      ["OK", 2],
      "counting resumes from what memcached held: nothing was counted meanwhile",
    );
    // The first failed read is answered (and logged) before the second opens the breaker.
    t.strictSame(warnings(daemon.logs()).slice(0, 2), [
      `counter store failed (memcache ${server.url}: no answer within 100ms), answered with failure mode deny`,
      `counter store unavailable (memcache ${server.url}: no answer within 100ms), answering with failure mode deny`,
    ]);
    t.equal(warnings(daemon.logs()).at(-1), "counter store recovered after N s");
  });
}
