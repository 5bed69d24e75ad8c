// BACKEND_TYPE=memcache end to end: the daemon on BACKEND_TYPE=memcache gives the Redis backend's answers
// with the reference's keys, fails open (within its 100 ms timeout) while memcached is away, refuses keys
// memcached cannot hold, and reports the reference's memcache stats.
import t, { type Test } from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { httpRequest } from "../helpers/http-request.js";
import { requireBinaries, startMemcached } from "../helpers/memcached-process.js";
import { pollUntil } from "../helpers/redis-process.js";
import { stayInsideWindow } from "../helpers/window-guard.js";
import { decisionCases } from "./decision-cases.js";

const memcacheEnv = (hostPort: string) => ({ BACKEND_TYPE: "memcache", MEMCACHE_HOST_PORT: hostPort });
const statOf = (stats: string, name: string) =>
  Number(new RegExp(`^${name.replaceAll(".", "\\.")}: (\\d+)$`, "m").exec(stats)?.[1]);

/** A memcached, a daemon on it with `rules` as its only rules file, and a gRPC client, closed at teardown. */
async function daemonOnMemcached(t: Test, rules: string) {
  const server = await startMemcached(t);
  const daemon = await startDaemon({
    ...memcacheEnv(server.url),
    RUNTIME_ROOT: t.testdir({ config: { "r.yaml": rules } }),
  });
  t.teardown(() => daemon.stop());
  const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
  t.teardown(() => client.close());
  return { server, daemon, client };
}

if (requireBinaries(t, ["memcached"])) {
  t.test("the end-to-end decision cases, on memcached, with the reference's keys", async (t) => {
    const server = await startMemcached(t);
    const daemon = await decisionCases(t, { ...memcacheEnv(server.url), CACHE_KEY_PREFIX: "pfx:" });
    // Registered after the cases, so it runs once they have all run.
    t.test(
      "the keys in memcached are the reference's: prefix + domain_key_value_<window start>",
      async (t) => {
        const keys = await server.keys();
        const windowed = (unit: number) => (key: string) => Number(key.split("_").at(-1)) % unit === 0;
        const minuteKeys = keys.filter((k) => k.startsWith("pfx:e2e_k_twenty_")).sort();
        const hourKeys = keys.filter((k) => k.startsWith("pfx:e2e_k_hundred_"));
        t.ok(minuteKeys.length >= 1 && minuteKeys.every(windowed(60)), minuteKeys.join(" "));
        t.ok(hourKeys.length >= 1 && hourKeys.every(windowed(3600)), hourKeys.join(" "));
        // The 21st request's increment runs after its answer: wait for it to land.
        const last = minuteKeys.at(-1)!;
        const value = await pollUntil(
          "the last increment",
          async () => {
            const v = await server.valueOf(last);
            return v === "21" ? v : undefined;
          },
          { timeoutMs: 5000 },
        );
        t.equal(value, "21", "20 within the limit and 1 over");
        t.strictSame(
          keys.filter((k) => !/^pfx:e2e_(k_[a-z0-9]+|banned_x)_\d+$/.test(k)),
          [],
          "no other key shapes",
        );
        const ttl = await server.ttlOf(last);
        t.ok(ttl > 0 && ttl <= 60 + 299, `TTL ${ttl}: the minute plus jitter below 300 s`);
        const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
        t.ok(
          statOf(stats, "ratelimit.memcache.multiget.__code=success") >= 24,
          "a multi-get per counted request",
        );
        t.equal(statOf(stats, "ratelimit.memcache.multiget.__code=error"), 0);
        t.equal(statOf(stats, "ratelimit.memcache.add.__code=success"), 3, "one add per key created");
        t.equal(statOf(stats, "ratelimit.memcache.increment.__code=miss"), 3);
        t.ok(
          statOf(stats, "ratelimit.memcache.keys_requested") >=
            statOf(stats, "ratelimit.memcache.keys_found"),
        );
      },
    );
  });

  t.test(
    "memcached away: decisions fail open fast, health and stats served, then counting resumes",
    async (t) => {
      const rules =
        "domain: down\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 3 }\n";
      const { server, daemon, client } = await daemonOnMemcached(t, rules);
      await stayInsideWindow(3600);
      const request = { domain: "down", descriptors: [{ entries: [{ key: "k", value: "v" }] }] };
      const remaining = async () => (await client.shouldRateLimit(request)).statuses[0]!.limit_remaining ?? 0;
      t.equal(await remaining(), 2);
      await server.kill();
      const started = performance.now();
      const answers: number[] = [];
      for (let i = 0; i < 10; i++) answers.push(await remaining());
      const elapsed = performance.now() - started;
      t.strictSame(answers, Array(10).fill(2), "read as 0: the reference fails open");
      t.ok(elapsed < 5000, `10 decisions in ${elapsed.toFixed(0)} ms`);
      t.equal((await httpRequest(daemon.httpPort, "/healthcheck")).status, 200, "still healthy");
      const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
      t.equal(statOf(stats, "ratelimit.memcache.multiget.__code=error"), 10);
      t.equal(
        statOf(stats, "ratelimit.service.call.should_rate_limit.redis_error"),
        0,
        "not a failed decision",
      );
      t.match(
        daemon.logs(),
        /level=error msg="Error multi-getting memcache keys \(\[down_k_v_\d+\]\): memcache 127\.0\.0\.1:\d+: /,
      );
      await server.restart();
      // The restarted node is empty: counting starts again from the first hit.
      const resumed = await pollUntil(
        "counting again",
        async () => ((await remaining()) === 1 ? true : undefined),
        {
          timeoutMs: 10_000,
          intervalMs: 100,
        },
      );
      t.ok(resumed);
      t.equal(await remaining(), 0);
    },
  );

  t.test(
    "a key memcached cannot hold: INVALID_ARGUMENT with the reason, and the daemon serves on",
    async (t) => {
      const rules =
        "domain: long\ndescriptors:\n  - key: user\n    rate_limit: { unit: minute, requests_per_unit: 10 }\n";
      const { server, daemon, client } = await daemonOnMemcached(t, rules);
      await stayInsideWindow(60);
      const ask = (value: string) =>
        client.shouldRateLimit({ domain: "long", descriptors: [{ entries: [{ key: "user", value }] }] });
      const windowStart = Math.floor(Date.now() / 60_000) * 60;
      // long_user_ + 240 × x + _ + 10 digits = 262 bytes.
      await t.rejects(ask("x".repeat(240)), {
        code: 3,
        details: `cache key "long_user_${"x".repeat(70)}…" is ${11 + 240 + String(windowStart).length} bytes long; memcached keys are at most 250 bytes`,
      });
      await t.rejects(ask("two words"), {
        code: 3,
        details: `cache key "long_user_two words_${windowStart}" contains a space at offset 13, which memcached keys cannot contain`,
      });
      t.equal((await ask("fine")).statuses[0]!.limit_remaining, 9, "still serving");
      const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
      t.equal(
        statOf(stats, "ratelimit.service.call.should_rate_limit.service_error"),
        2,
        "the requests' fault",
      );
      t.equal(statOf(stats, "ratelimit.service.call.should_rate_limit.redis_error"), 0, "not the backend's");
      const stored = await pollUntil(
        "the key counted",
        async () => {
          const keys = await server.keys();
          return keys.length > 0 ? keys : undefined;
        },
        { timeoutMs: 5000 },
      );
      t.strictSame(stored, [`long_user_fine_${windowStart}`], "the refused keys never reached memcached");
    },
  );
}
