// The extensions through the daemon (docs/algorithms.md): unit_multiplier in current_limit's
// field 4 on the gRPC fast path and /json, absent for plain rules; the legacy RateLimit-* headers of a token
// bucket; an Envoy-only client unaffected; and memcached refusing a rule set that asks for another algorithm
// while the old rules keep answering.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { grpcUnary } from "../helpers/grpc-unary-client.js";
import { httpRequest } from "../helpers/http-request.js";
import { requireBinaries, startMemcached } from "../helpers/memcached-process.js";
import { pollUntil } from "../helpers/redis-process.js";

const RLS = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const RULES = `domain: x
descriptors:
  - key: five
    rate_limit: { unit: minute, requests_per_unit: 1000, unit_multiplier: 5 }
  - key: plain
    rate_limit: { unit: minute, requests_per_unit: 1000 }
  - key: bucket
    rate_limit: { unit: hour, requests_per_unit: 60, algorithm: token_bucket, burst: 3 }
`;
const statOf = (stats: string, name: string) =>
  Number(new RegExp(`^${name.replaceAll(".", "\\.")}: (\\d+)$`, "m").exec(stats)?.[1]);

t.test("unit_multiplier travels in current_limit field 4, only when greater than 1", async (t) => {
  const daemon = await startDaemon({
    RUNTIME_ROOT: t.testdir({ config: { "x.yaml": RULES } }),
    LIMIT_RESPONSE_HEADERS_ENABLED: "true",
  });
  t.teardown(() => daemon.stop());
  const address = `127.0.0.1:${daemon.grpcPort}`;
  const ask = (key: string) =>
    grpcUnary(address, RLS, RateLimitRequestSchema, RateLimitResponseSchema, {
      domain: "x",
      descriptors: [{ entries: [{ key, value: "v" }] }],
    });
  const five = await ask("five");
  t.strictSame(
    { ...five.statuses[0]!.currentLimit, $typeName: undefined },
    { $typeName: undefined, name: "", requestsPerUnit: 1000, unit: 2, unitMultiplier: 5 },
  );
  const plain = await ask("plain");
  t.equal(plain.statuses[0]!.currentLimit!.unitMultiplier, 0, "a plain rule: field 4 not sent");

  const json = await httpRequest(daemon.httpPort, "/json", {
    method: "POST",
    body: JSON.stringify({ domain: "x", descriptors: [{ entries: [{ key: "five", value: "v" }] }] }),
  });
  t.equal(json.status, 200);
  t.match(JSON.parse(json.body).statuses[0].currentLimit, {
    requestsPerUnit: 1000,
    unit: "MINUTE",
    unitMultiplier: 5,
  });

  // What Envoy's own proto decodes: the reference's fields, field 4 skipped as unknown.
  const envoy = envoyRlsClient(address);
  t.teardown(() => envoy.close());
  const answer = await envoy.shouldRateLimit({
    domain: "x",
    descriptors: [{ entries: [{ key: "five", value: "w" }] }],
  });
  t.strictSame(answer.statuses[0]!.current_limit, { requests_per_unit: 1000, unit: "MINUTE" });
  t.equal(answer.overall_code, "OK");

  // A token bucket of burst 3 refilling one token a minute: RateLimit-Limit is the burst.
  const headers: string[][] = [];
  for (let i = 0; i < 4; i++) {
    const reply = await envoy.shouldRateLimit({
      domain: "x",
      descriptors: [{ entries: [{ key: "bucket", value: "b" }] }],
    });
    headers.push([
      reply.overall_code ?? "",
      ...reply.response_headers_to_add.map((h) => `${h.key}=${h.value}`),
    ]);
  }
  t.strictSame(headers, [
    ["OK", "RateLimit-Limit=3", "RateLimit-Remaining=2", "RateLimit-Reset=60"],
    ["OK", "RateLimit-Limit=3", "RateLimit-Remaining=1", "RateLimit-Reset=120"],
    ["OK", "RateLimit-Limit=3", "RateLimit-Remaining=0", "RateLimit-Reset=180"],
    ["OVER_LIMIT", "RateLimit-Limit=3", "RateLimit-Remaining=0", "RateLimit-Reset=60"],
  ]);
});

if (requireBinaries(t, ["memcached"])) {
  t.test(
    "memcached: a rule set asking for a sliding window is refused whole; the old rules answer",
    async (t) => {
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
      writeFileSync(
        join(root, "config", "b.yaml"),
        "domain: b\ndescriptors:\n  - key: s\n    rate_limit: { unit: minute, requests_per_unit: 5, algorithm: sliding_window }\n",
      );
      const stats = await pollUntil(
        "the refused reload",
        async () => {
          const body = (await httpRequest(daemon.debugPort, "/stats")).body;
          return statOf(body, "ratelimit.service.config_load_error") === 1 ? body : undefined;
        },
        { timeoutMs: 10_000 },
      );
      t.equal(statOf(stats, "ratelimit.service.config_load_success"), 1, "only the first load");
      t.match(
        daemon.logs(),
        "Error loading new configuration: b.s: algorithm sliding_window is not supported by the memcache backend, which counts fixed_window only",
      );
      const envoy = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
      t.teardown(() => envoy.close());
      const ask = (domain: string, key: string) =>
        envoy.shouldRateLimit({ domain, descriptors: [{ entries: [{ key, value: "v" }] }] });
      t.equal((await ask("a", "k")).overall_code, "OK");
      t.equal((await ask("a", "k")).overall_code, "OVER_LIMIT", "the old rule still limits");
      t.strictSame((await ask("b", "s")).statuses, [{ code: "OK" }], "the refused domain is not loaded");
    },
  );
}
