// Reservations through the built daemon (docs/token-budgets.md, spec §E7) with Envoy-shaped requests: the
// request-time check carries the descriptor's hits_addend {value: 0}, the stream-end charge {value: N}.
// Memory backend, and Redis shared by two daemons; the Redis topologies in test/integration/backends/reservation-script.test.ts.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { distEntry, startDaemon } from "../helpers/daemon-process.js";
import { grpcUnary } from "../helpers/grpc-unary-client.js";
import { httpRequest } from "../helpers/http-request.js";
import { requireBinaries, startMemcached } from "../helpers/memcached-process.js";
import { pollUntil } from "../helpers/redis-process.js";
import { startRedis } from "../helpers/redis-servers.js";
import { sleep } from "../helpers/rules-dir.js";
import { runCommand } from "../helpers/run-command.js";
import { eventually, rlconfig, xdsEnv } from "../helpers/xds-fixtures.js";

const RLS = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const OK = 1;
const OVER_LIMIT = 2;

export const BUDGET_RULES = `domain: ai
descriptors:
  - key: user
    rate_limit:
      unit: hour
      requests_per_unit: 10000
      reservation: {estimate: 2000, ttl: 2s, request_id_key: x_request_id}
  - key: team
    rate_limit:
      unit: hour
      requests_per_unit: 10000
      reservation: {estimate: 2000, ttl: 300s}
  - key: plain
    rate_limit: {unit: hour, requests_per_unit: 10}
`;

/** Token buckets: 10,000 a day (a token each 8.64 s: no refill within a test) and 10,000 a second. */
const BUCKET_RULES = `domain: ai
descriptors:
  - key: tenant
    rate_limit:
      unit: day
      requests_per_unit: 10000
      algorithm: token_bucket
      reservation: {estimate: 2000, ttl: 300s}
  - key: burst
    rate_limit:
      unit: second
      requests_per_unit: 10000
      algorithm: token_bucket
      reservation: {estimate: 2000, ttl: 300s}
`;

const statOf = (stats: string, name: string) =>
  Number(new RegExp(`^${name.replaceAll(".", "\\.")}: (\\d+)$`, "m").exec(stats)?.[1]);

/** A gRPC caller of `address`: one descriptor `key=value` (plus the request id entry when given), hits N. */
export function budgetCaller(address: string) {
  return async (key: string, value: string, hits: number, requestId?: string): Promise<[number, number]> => {
    const entries = [{ key, value }];
    if (requestId !== undefined) entries.push({ key: "x_request_id", value: requestId });
    const response = await grpcUnary(address, RLS, RateLimitRequestSchema, RateLimitResponseSchema, {
      domain: "ai",
      descriptors: [{ entries, hitsAddend: BigInt(hits) }],
    });
    return [response.statuses[0]!.code, response.statuses[0]!.limitRemaining];
  };
}

t.test("memory backend: the acceptance scenarios of §E7", async (t) => {
  const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({ config: { "ai.yaml": BUDGET_RULES } }) });
  t.teardown(() => daemon.stop());
  const call = budgetCaller(`127.0.0.1:${daemon.grpcPort}`);

  t.test("20 concurrent checks against 10,000 with estimate 2,000 admit exactly 5", async (t) => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => call("team", "c", 0)));
    t.equal(answers.filter(([code]) => code === OK).length, 5);
    t.equal(answers.filter(([code]) => code === OVER_LIMIT).length, 15);
    t.same(
      answers
        .filter(([code]) => code === OK)
        .map(([, remaining]) => remaining)
        .sort((a, b) => a - b),
      [0, 2000, 4000, 6000, 8000],
    );
  });

  t.test("charges settle holds: by request id where given, else the oldest", async (t) => {
    t.same(await call("team", "s", 0), [OK, 8000]);
    t.same(await call("team", "s", 0), [OK, 6000]);
    // No request id: the oldest hold goes; U 1200, R 2000.
    t.same(await call("team", "s", 1200), [OK, 6800]);
    t.same(await call("user", "s", 0, "a"), [OK, 8000]);
    t.same(await call("user", "s", 0, "b"), [OK, 6000]);
    t.same(await call("user", "s", 0, "a"), [OK, 6000], "a repeated check holds nothing more");
    t.same(await call("user", "s", 2500, "b"), [OK, 5500], "b's own hold settled: U 2500, R 2000");
    t.same(await call("user", "s", 100, "a"), [OK, 7400], "then a's: U 2600, R 0");
  });

  t.test("unsettled holds expire after ttl", async (t) => {
    for (let i = 0; i < 5; i++) t.same(await call("user", "e", 0, `e${i}`), [OK, 8000 - 2000 * i]);
    t.same(await call("user", "e", 0, "late"), [OVER_LIMIT, 0]);
    await sleep(2_100);
    t.same(await call("user", "e", 0, "late"), [OK, 8000], "the 2 s holds are gone");
  });

  t.test("an overshooting charge counts in full", async (t) => {
    t.same(await call("user", "o", 0, "big"), [OK, 8000]);
    t.same(await call("user", "o", 15000, "big"), [OVER_LIMIT, 0]);
    t.same(await call("user", "o", 0, "next"), [OVER_LIMIT, 0]);
    const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
    t.ok(statOf(stats, "ratelimit.service.rate_limit.ai.user.total_hits") >= 15000);
  });

  t.test("a rule without a reservation is unchanged: its key, its stats, its answers", async (t) => {
    t.same(await call("plain", "p", 1, "id-9"), [OK, 9]);
    const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
    t.equal(statOf(stats, "ratelimit.service.rate_limit.ai.plain.total_hits"), 1);
    t.notMatch(stats, /x_request_id|id-9/, "the request id names no stat");
  });

  t.test("/rlconfig shows the reservation", async (t) => {
    const dump = (await httpRequest(daemon.debugPort, "/rlconfig")).body;
    t.match(
      dump,
      "ai.user: unit=HOUR requests_per_unit=10000, shadow_mode: false, quota_mode: false, algorithm=fixed_window, unit_multiplier=1, reservation={estimate=2000, ttl=2s, request_id_key=x_request_id}\n",
    );
    t.match(dump, "ai.plain: unit=HOUR requests_per_unit=10, shadow_mode: false, quota_mode: false\n");
  });
});

t.test(
  "/explain shows U, R and the live holds, counts nothing; the headers give the reserved figure",
  async (t) => {
    const daemon = await startDaemon({
      RUNTIME_ROOT: t.testdir({ config: { "ai.yaml": BUDGET_RULES } }),
      LIMIT_RESPONSE_HEADERS_ENABLED: "true",
    });
    t.teardown(() => daemon.stop());
    const call = budgetCaller(`127.0.0.1:${daemon.grpcPort}`);
    t.same(await call("user", "h", 0, "a"), [OK, 8000]);
    t.same(await call("user", "h", 700, "a"), [OK, 9300]);
    t.same(await call("user", "h", 0, "b"), [OK, 7300]);
    const explainBody = (hits: number, id: string) =>
      JSON.stringify({
        domain: "ai",
        descriptors: [
          {
            entries: [
              { key: "user", value: "h" },
              { key: "x_request_id", value: id },
            ],
            hitsAddend: String(hits),
          },
        ],
      });
    for (let i = 0; i < 2; i++) {
      const reply = await httpRequest(daemon.debugPort, "/explain", {
        method: "POST",
        body: explainBody(0, "c"),
      });
      t.equal(reply.status, 200);
      const answer = JSON.parse(reply.body);
      const described = answer.descriptors[0];
      t.equal(described.rule, "ai.user", "matched without the request id entry");
      t.same(described.limits[0].reservation, {
        estimate: 2000,
        ttlSeconds: 2,
        requestIdKey: "x_request_id",
        requestId: "c",
        ownHold: false,
        used: 700,
        held: 2000,
        liveHolds: 1,
        role: "check",
      });
      t.same(described.status, {
        code: "OK",
        currentLimit: { requestsPerUnit: 10000, unit: "HOUR" },
        limitRemaining: 5300,
        durationUntilReset: described.status.durationUntilReset,
      });
    }
    const charge = JSON.parse(
      (await httpRequest(daemon.debugPort, "/explain", { method: "POST", body: explainBody(300, "b") })).body,
    );
    t.match(charge.descriptors[0].limits[0].reservation, {
      role: "charge",
      ownHold: true,
      used: 700,
      held: 2000,
    });
    t.equal(charge.descriptors[0].status.limitRemaining, 9000, "700 + 300 counted, b's hold settled");

    // The legacy headers: RateLimit-Remaining is L − U − R.
    const json = await httpRequest(daemon.httpPort, "/json", {
      method: "POST",
      body: JSON.stringify({
        domain: "ai",
        descriptors: [
          {
            entries: [
              { key: "user", value: "h" },
              { key: "x_request_id", value: "d" },
            ],
            hitsAddend: "0",
          },
        ],
      }),
    });
    const added = JSON.parse(json.body).responseHeadersToAdd as { key: string; value: string }[];
    t.same(
      added.filter((header) => header.key !== "RateLimit-Reset"),
      [
        { key: "RateLimit-Limit", value: "10000" },
        { key: "RateLimit-Remaining", value: "5300" },
      ],
    );
  },
);

t.test("the IETF fields give the reserved figure too", async (t) => {
  const daemon = await startDaemon({
    RUNTIME_ROOT: t.testdir({ config: { "ai.yaml": BUDGET_RULES } }),
    LIMIT_RESPONSE_HEADERS_ENABLED: "true",
    LIMIT_RESPONSE_HEADERS_FORMAT: "ietf",
  });
  t.teardown(() => daemon.stop());
  const response = await grpcUnary(
    `127.0.0.1:${daemon.grpcPort}`,
    RLS,
    RateLimitRequestSchema,
    RateLimitResponseSchema,
    {
      domain: "ai",
      descriptors: [{ entries: [{ key: "team", value: "i" }], hitsAddend: 0n }],
    },
  );
  const headers = Object.fromEntries(response.responseHeadersToAdd.map((h) => [h.key, h.value]));
  t.equal(headers["RateLimit-Policy"], '"ai.team";q=10000;w=3600');
  t.match(headers.RateLimit, /^"ai\.team";r=8000;t=\d+$/);
});

t.test(
  "a rule file with a bad reservation is refused naming file and rule; the old rules stay",
  async (t) => {
    const root = t.testdir({ config: { "ai.yaml": BUDGET_RULES } });
    const daemon = await startDaemon({ RUNTIME_ROOT: root });
    t.teardown(() => daemon.stop());
    writeFileSync(
      join(root, "config", "ai.yaml"),
      "domain: ai\ndescriptors:\n  - key: user\n    rate_limit: { unit: hour, requests_per_unit: 100, reservation: { estimate: 200, ttl: 5m } }\n",
    );
    await pollUntil(
      "the refused reload",
      async () => {
        const body = (await httpRequest(daemon.debugPort, "/stats")).body;
        return statOf(body, "ratelimit.service.config_load_error") === 1 ? body : undefined;
      },
      { timeoutMs: 10_000 },
    );
    t.match(
      daemon.logs(),
      "ai.yaml: rate_limit of 'ai.user': reservation estimate 200 is larger than the limit of 100: no check could ever be admitted",
    );
    const call = budgetCaller(`127.0.0.1:${daemon.grpcPort}`);
    t.same(await call("team", "x", 0), [OK, 8000], "the old rules answer");
  },
);

t.test(
  "memory backend: a token bucket's reservations, U the tokens taken and not yet refilled",
  async (t) => {
    const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({ config: { "ai.yaml": BUCKET_RULES } }) });
    t.teardown(() => daemon.stop());
    const call = budgetCaller(`127.0.0.1:${daemon.grpcPort}`);
    const answers = await Promise.all(Array.from({ length: 20 }, () => call("tenant", "c", 0)));
    t.equal(answers.filter(([code]) => code === OK).length, 5, "20 concurrent checks admit exactly 5");
    t.same(
      answers
        .filter(([code]) => code === OK)
        .map(([, remaining]) => remaining)
        .sort((a, b) => a - b),
      [0, 2000, 4000, 6000, 8000],
    );
    // The oldest hold goes: U 1,500, R 8,000.
    t.same(await call("tenant", "c", 1500), [OK, 500]);
    t.same(await call("tenant", "c", 0), [OVER_LIMIT, 0], "U + R + estimate > L");
    // Into debt beyond the bucket: U 4,500, R 6,000.
    t.same(await call("tenant", "c", 3000), [OVER_LIMIT, 0]);
    t.same(await call("tenant", "c", 4000), [OVER_LIMIT, 0], "U 8,500, R 4,000");

    // 10,000 a second: a full charge empties the bucket, which refills 10 tokens a ms.
    t.same(await call("burst", "b", 10_000), [OK, 0]);
    t.same(await call("burst", "b", 0), [OVER_LIMIT, 0], "nothing refilled yet to hold 2,000");
    await sleep(400);
    const [code, remaining] = await call("burst", "b", 0);
    t.equal(code, OK, "400 ms refilled more than the estimate");
    t.ok(remaining >= 2000 && remaining <= 8000, `remaining ${remaining}: refilled less the new hold`);
  },
);

if (requireBinaries(t, ["memcached"])) {
  t.test("memcached refuses a rule set with a reservation whole, naming the rule", async (t) => {
    const server = await startMemcached(t);
    const root = t.testdir({
      config: {
        "a.yaml":
          "domain: a\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n",
      },
    });
    const daemon = await startDaemon({
      BACKEND_TYPE: "memcache",
      MEMCACHE_HOST_PORT: server.url,
      RUNTIME_ROOT: root,
    });
    t.teardown(() => daemon.stop());
    writeFileSync(join(root, "config", "b.yaml"), BUDGET_RULES);
    await pollUntil(
      "the refused reload",
      async () => {
        const body = (await httpRequest(daemon.debugPort, "/stats")).body;
        return statOf(body, "ratelimit.service.config_load_error") === 1 ? body : undefined;
      },
      { timeoutMs: 10_000 },
    );
    t.match(
      daemon.logs(),
      "Error loading new configuration: ai.user: reservation is not supported by the memcache backend, which keeps no holds: use the redis or memory backend",
    );
    const envoy = budgetCaller(`127.0.0.1:${daemon.grpcPort}`);
    t.same(await envoy("plain", "v", 1), [OK, 0], "domain ai was not loaded: no limit applies");
  });
}

if (requireBinaries(t, ["redis-server"])) {
  t.test("two daemons on one Redis share holds; a hold nobody settles expires in Redis", async (t) => {
    const redis = await startRedis(t);
    const env = { BACKEND_TYPE: "redis", REDIS_SOCKET_TYPE: "tcp", REDIS_URL: redis.url };
    const first = await startDaemon({
      ...env,
      RUNTIME_ROOT: t.testdir({ config: { "ai.yaml": BUDGET_RULES } }),
    });
    t.teardown(() => first.stop());
    const second = await startDaemon({
      ...env,
      RUNTIME_ROOT: t.testdir({ config: { "ai.yaml": BUDGET_RULES } }),
    });
    t.teardown(() => second.stop());
    const one = budgetCaller(`127.0.0.1:${first.grpcPort}`);
    const two = budgetCaller(`127.0.0.1:${second.grpcPort}`);
    // 20 concurrent checks, half through each daemon: 5 admitted in all.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? one : two)("team", "shared", 0)),
    );
    t.equal(answers.filter(([code]) => code === OK).length, 5);
    // A hold placed through one daemon is settled through the other, by request id.
    t.same(await one("user", "r", 0, "req-1"), [OK, 8000]);
    t.same(await two("user", "r", 0, "req-2"), [OK, 6000]);
    t.same(await two("user", "r", 1000, "req-1"), [OK, 7000]);
    t.equal(await redis.cli("HEXISTS", "ai_user_r_resv3600", "=req-1"), "0");
    t.equal(await redis.cli("HEXISTS", "ai_user_r_resv3600", "=req-2"), "1");
    // req-2 is never charged: its 2 s hold ends by itself, seen by both daemons.
    await sleep(2_100);
    t.same(await one("user", "r", 0, "req-3"), [OK, 7000]);
    t.same(await two("user", "r", 0, "req-4"), [OK, 5000]);
  });

  t.test("two daemons on one Redis share a token bucket's holds", async (t) => {
    const redis = await startRedis(t);
    const env = { BACKEND_TYPE: "redis", REDIS_SOCKET_TYPE: "tcp", REDIS_URL: redis.url };
    const first = await startDaemon({
      ...env,
      RUNTIME_ROOT: t.testdir({ config: { "ai.yaml": BUCKET_RULES } }),
    });
    t.teardown(() => first.stop());
    const second = await startDaemon({
      ...env,
      RUNTIME_ROOT: t.testdir({ config: { "ai.yaml": BUCKET_RULES } }),
    });
    t.teardown(() => second.stop());
    const one = budgetCaller(`127.0.0.1:${first.grpcPort}`);
    const two = budgetCaller(`127.0.0.1:${second.grpcPort}`);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? one : two)("tenant", "shared", 0)),
    );
    t.equal(answers.filter(([code]) => code === OK).length, 5, "20 concurrent checks admit exactly 5");
    t.same(await one("tenant", "shared", 1500), [OK, 500]);
    t.same(await two("tenant", "shared", 3000), [OVER_LIMIT, 0], "into debt: U 4,500, R 6,000");
    t.equal(await redis.cli("HLEN", "ai_tenant_shared_resvgcra86400"), "7", "w, u, p, o and three holds");
  });
}

t.test(
  "ratelimit-config-check accepts a reservation and refuses a bad one with the daemon's message",
  async (t) => {
    const dir = t.testdir({
      good: { "ai.yaml": BUDGET_RULES },
      bad: {
        "ai.yaml":
          "domain: ai\ndescriptors:\n  - key: user\n    rate_limit: { unit: hour, requests_per_unit: 10, reservation: { estimate: 5, ttl: 2d } }\n",
      },
    });
    const good = await runCommand("ratelimit-config-check", ["-config_dir", join(dir, "good")]);
    t.equal(good.code, 0);
    t.match(good.stdout, "all rate limit configs ok\n");
    const bad = await runCommand("ratelimit-config-check", ["-config_dir", join(dir, "bad")]);
    t.equal(bad.code, 1);
    t.match(
      bad.stdout,
      `error loading rate limit configs: ${join(dir, "bad", "ai.yaml")}: rate_limit of 'ai.user': reservation ttl '2d' is not a duration from 1s to 24h written as Ns, Nm or Nh\n`,
    );
  },
);

t.test("over xDS: the reservation travels in field 1003 and holds as from a file", async (t) => {
  const dir = t.testdir({ "ai.yaml": BUDGET_RULES });
  const server = spawn(
    process.execPath,
    [distEntry("ratelimit-xds-server"), "-config_dir", dir, "-port", "0"],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  t.teardown(() => server.kill("SIGKILL"));
  let logs = "";
  server.stderr.on("data", (chunk: Buffer) => {
    logs += chunk;
  });
  await eventually("listening", () => /listening on 127\.0\.0\.1:\d+/.test(logs));
  t.notMatch(logs, /dropped|cannot carry/i, "nothing of the rule file was left out");
  const port = Number(/listening on 127\.0\.0\.1:(\d+)/.exec(logs)![1]);
  const daemon = await startDaemon(xdsEnv(port));
  t.teardown(() => daemon.stop());
  t.match(
    await rlconfig(daemon.debugPort),
    "ai.user: unit=HOUR requests_per_unit=10000, shadow_mode: false, quota_mode: false, algorithm=fixed_window, unit_multiplier=1, reservation={estimate=2000, ttl=2s, request_id_key=x_request_id}\n",
  );
  const call = budgetCaller(`127.0.0.1:${daemon.grpcPort}`);
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => call("user", "x", 0, `r${i}`)));
  t.equal(answers.filter(([code]) => code === OK).length, 5);
});
