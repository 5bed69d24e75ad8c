// BACKEND_TYPE=redis end to end: the daemon on BACKEND_TYPE=redis gives the memory backend's answers with
// the reference's keys, one Redis round trip per request (none when the local cache answers), and survives
// Redis going away.
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { httpRequest } from "../helpers/http-request.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";
import { startRoundTripProxy } from "../helpers/round-trip-proxy.js";
import { stayInsideWindow } from "../helpers/window-guard.js";
import { decisionCases } from "./decision-cases.js";

const redisEnv = (url: string) => ({
  BACKEND_TYPE: "redis",
  REDIS_SOCKET_TYPE: "tcp",
  REDIS_URL: url,
  REDIS_POOL_SIZE: "2",
});

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("the end-to-end decision cases, on Redis, with the reference's keys", async (t) => {
    const server = await startRedis(t);
    await decisionCases(t, { ...redisEnv(server.url), CACHE_KEY_PREFIX: "pfx:" });
    // Registered after the cases, so it runs once they have all run.
    t.test("the keys in Redis are the reference's: prefix + domain_key_value_<window start>", async (t) => {
      const keys = (await server.cli("KEYS", "*")).split("\n");
      const windowed = (unit: number) => (key: string) => Number(key.split("_").at(-1)) % unit === 0;
      const minuteKeys = keys.filter((k) => k.startsWith("pfx:e2e_k_twenty_"));
      const hourKeys = keys.filter((k) => k.startsWith("pfx:e2e_k_hundred_"));
      t.ok(minuteKeys.length >= 1 && minuteKeys.every(windowed(60)), minuteKeys.join(" "));
      t.ok(hourKeys.length >= 1 && hourKeys.every(windowed(3600)), hourKeys.join(" "));
      t.equal(await server.cli("GET", minuteKeys.at(-1)!), "21", "20 within the limit and 1 over");
      const unexpected = keys.filter((k) => !/^pfx:e2e_(k_[a-z0-9]+|banned_x)_\d+$/.test(k));
      t.strictSame(unexpected, [], "no other key shapes");
      const ttl = Number(await server.cli("TTL", minuteKeys.at(-1)!));
      t.ok(ttl > 0 && ttl <= 60 + 299, `TTL ${ttl}: the minute plus jitter below 300 s`);
    });
  });

  t.test("one round trip per request; none when the local cache answers", async (t) => {
    const server = await startRedis(t);
    const proxy = await startRoundTripProxy(t, server);
    const rules =
      "domain: rt\ndescriptors:\n  - key: a\n    rate_limit: { unit: hour, requests_per_unit: 3 }\n  - key: b\n    rate_limit: { unit: hour, requests_per_unit: 100 }\n";
    const daemon = await startDaemon({
      ...redisEnv(proxy.url),
      REDIS_POOL_SIZE: "1",
      LOCAL_CACHE_SIZE_IN_BYTES: "1048576",
      RUNTIME_ROOT: t.testdir({ config: { "r.yaml": rules } }),
    });
    t.teardown(() => daemon.stop());
    const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
    t.teardown(() => client.close());
    await stayInsideWindow(3600);
    const ask = (key: string) =>
      client.shouldRateLimit({
        domain: "rt",
        descriptors: [{ entries: [{ key, value: "x" }] }, { entries: [{ key: "b", value: "y" }] }],
      });
    await server.cli("CONFIG", "RESETSTAT");
    proxy.reset();
    // a: 3 per hour. Requests 1–3 are within, the 4th goes over and fills the local cache.
    for (let i = 0; i < 4; i++) await ask("a");
    t.equal(proxy.roundTrips(), 4, "4 requests of 2 descriptors: 4 round trips");
    const commands = await server.cli("INFO", "commandstats");
    t.match(commands, /^cmdstat_incrby:calls=8,/m, "INCRBY once per descriptor");
    t.match(commands, /^cmdstat_expire:calls=8,/m, "EXPIRE once per descriptor");
    proxy.reset();
    const cached = await client.shouldRateLimit({
      domain: "rt",
      descriptors: [{ entries: [{ key: "a", value: "x" }] }],
    });
    t.equal(cached.overall_code, "OVER_LIMIT");
    t.equal(proxy.roundTrips(), 0, "over limit and known to the local cache: no round trip");
    const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
    t.match(stats, /^ratelimit\.service\.rate_limit\.rt\.a\.over_limit_with_local_cache: 1$/m);
  });

  t.test(
    "Redis stopped: fast UNAVAILABLE, health and debug still served, flat memory, recovery",
    async (t) => {
      const server = await startRedis(t);
      const rules =
        "domain: down\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000000 }\n";
      const daemon = await startDaemon({
        ...redisEnv(server.url),
        REDIS_TIMEOUT: "1s",
        RUNTIME_ROOT: t.testdir({ config: { "r.yaml": rules } }),
      });
      t.teardown(() => daemon.stop());
      const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
      t.teardown(() => client.close());
      const request = { domain: "down", descriptors: [{ entries: [{ key: "k", value: "v" }] }] };
      t.equal((await client.shouldRateLimit(request)).overall_code, "OK");
      await server.kill();
      const started = performance.now();
      // The address stays in the log (test/e2e/backend-failure-logs.test.ts); clients get the reason only.
      await t.rejects(client.shouldRateLimit(request), {
        code: 14,
        details: /^redis: connection (closed|reset|refused)$/,
      });
      t.ok(performance.now() - started < 1000, "failed within REDIS_TIMEOUT");
      const heap = async () =>
        Number(
          /^ratelimit\.node\.heap_used_bytes: (\d+)$/m.exec(
            (await httpRequest(daemon.debugPort, "/stats")).body,
          )?.[1],
        );
      const before = await heap();
      for (let round = 0; round < 10; round++) {
        await Promise.allSettled(Array.from({ length: 500 }, () => client.shouldRateLimit(request)));
      }
      const after = await heap();
      t.ok(
        after - before < 32 * 1024 * 1024,
        `heap ${(before / 1e6).toFixed(1)} MB → ${(after / 1e6).toFixed(1)} MB over 5000 failed decisions`,
      );
      t.equal((await httpRequest(daemon.httpPort, "/healthcheck")).status, 200, "health still served");
      t.match(
        (await httpRequest(daemon.debugPort, "/stats")).body,
        /^ratelimit\.service\.call\.should_rate_limit\.redis_error: 500[1-9]$/m,
      );
      await server.restart();
      const deadline = Date.now() + 10_000;
      let answered = false;
      while (!answered && Date.now() < deadline) {
        answered = await client.shouldRateLimit(request).then(
          () => true,
          () => false,
        );
        if (!answered) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      t.ok(answered, "decisions succeed again without a restart");
    },
  );
}
