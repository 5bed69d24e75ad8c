// POST /explain on the debug port (docs/explain.md): the whole answer for a file-configured rule
// (search, rule, file and line, limits, counters, status), for an xDS-pushed one (resource and version),
// what it refuses (other methods, bodies that do not parse, requests the service refuses), a failing store
// (503), and that it counts nothing. test/e2e/explain-exact.test.ts compares it with real decisions.
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";
import { stayInsideWindow } from "../helpers/window-guard.js";
import { config, eventually, startManagementServer, xdsEnv } from "../helpers/xds-fixtures.js";

const RULES = `domain: shop
descriptors:
  - key: user
    value: alice
    descriptors:
      - key: path
        value: "/cart*"
        rate_limit: { unit: hour, requests_per_unit: 5 }
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 100 }
`;
const BODY = {
  domain: "shop",
  descriptors: [
    {
      entries: [
        { key: "user", value: "alice" },
        { key: "path", value: "/cart/7" },
      ],
    },
    { entries: [{ key: "other", value: "x" }] },
  ],
};
const explain = async (port: number, body: unknown, method = "POST") => {
  const reply = await httpRequest(port, "/explain", {
    method,
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return { status: reply.status, json: JSON.parse(reply.body) as Record<string, unknown> };
};
/** /stats without the process's own gauges (memory, uptime), which move by themselves. */
const countedStats = async (port: number) =>
  (await httpRequest(port, "/stats")).body
    .split("\n")
    .filter((line) => !line.startsWith("ratelimit.node."))
    .join("\n");

t.test("a file rule: the search, the rule's file and line, its counter, and the status", async (t) => {
  const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({ config: { "shop.yaml": RULES } }) });
  t.teardown(() => daemon.stop());
  await stayInsideWindow(3600, 20);
  const hour = Math.floor(Date.now() / 3_600_000) * 3600;
  for (let i = 0; i < 2; i++) {
    await httpRequest(daemon.httpPort, "/json", { method: "POST", body: JSON.stringify(BODY) });
  }
  const before = await countedStats(daemon.debugPort);
  const { status, json } = await explain(daemon.debugPort, BODY);
  t.equal(status, 200);
  t.strictSame(json, {
    domain: "shop",
    overallCode: "OK",
    rules: { source: "file", loadedAt: (json.rules as { loadedAt: string }).loadedAt },
    store: "memory",
    descriptors: [
      {
        entries: [
          { key: "user", value: "alice" },
          { key: "path", value: "/cart/7" },
        ],
        hits: 1,
        search: [
          {
            entry: { key: "user", value: "alice" },
            tried: [{ candidate: "user_alice", how: "exact", matched: true }],
            matched: "user_alice",
            how: "exact",
          },
          {
            entry: { key: "path", value: "/cart/7" },
            tried: [
              { candidate: "path_/cart/7", how: "exact", matched: false },
              { candidate: "path_/cart*", how: "wildcard", matched: true },
            ],
            matched: "path_/cart*",
            how: "wildcard",
          },
        ],
        rule: "shop.user_alice.path_/cart*",
        origin: { file: "shop.yaml", line: 6 },
        override: null,
        replaced: false,
        unlimited: false,
        shadowMode: false,
        quotaMode: false,
        why: "matched rule shop.user_alice.path_/cart*",
        limits: [
          {
            name: "",
            algorithm: "fixed_window",
            requestsPerUnit: 5,
            unit: "HOUR",
            unitMultiplier: 1,
            windowSeconds: 3600,
            counters: [{ key: `shop_user_alice_path_/cart/7_${hour}`, value: 2 }],
            localCacheHit: false,
          },
        ],
        status: {
          code: "OK",
          currentLimit: { requestsPerUnit: 5, unit: "HOUR" },
          limitRemaining: 2,
          durationUntilReset: (json.descriptors as { status: { durationUntilReset: string } }[])[0]!.status
            .durationUntilReset,
        },
      },
      {
        entries: [{ key: "other", value: "x" }],
        hits: 1,
        search: [
          {
            entry: { key: "other", value: "x" },
            tried: [
              { candidate: "other_x", how: "exact", matched: false },
              { candidate: "other", how: "key only", matched: false },
            ],
            matched: null,
            how: null,
          },
        ],
        rule: null,
        origin: null,
        override: null,
        replaced: false,
        unlimited: false,
        shadowMode: false,
        quotaMode: false,
        why: "no rule matched: domain 'shop' searched at levels other",
        limits: [],
        status: { code: "OK" },
      },
    ],
  });
  t.equal(await countedStats(daemon.debugPort), before, "no stat moved");
  const again = await explain(daemon.debugPort, BODY);
  t.equal(
    (again.json.descriptors as { limits: { counters: { value: number }[] }[] }[])[0]!.limits[0]!.counters[0]!
      .value,
    2,
    "no counter moved",
  );
  const decided = JSON.parse(
    (await httpRequest(daemon.httpPort, "/json", { method: "POST", body: JSON.stringify(BODY) })).body,
  ) as { statuses: { limitRemaining: number }[] };
  t.equal(decided.statuses[0]!.limitRemaining, 2, "the decision after it is the one it explained");
});

t.test("what it refuses", async (t) => {
  const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({ config: { "shop.yaml": RULES } }) });
  t.teardown(() => daemon.stop());
  t.strictSame(await explain(daemon.debugPort, undefined, "GET"), {
    status: 405,
    json: { error: "use POST with a /json request body" },
  });
  const garbage = await explain(daemon.debugPort, "{not json");
  t.equal(garbage.status, 400);
  t.match(
    garbage.json.error,
    /^cannot decode message envoy\.service\.ratelimit\.v3\.RateLimitRequest from JSON/,
  );
  t.strictSame(await explain(daemon.debugPort, { domain: "", descriptors: BODY.descriptors }), {
    status: 400,
    json: { error: "rate limit domain must not be empty" },
  });
  t.strictSame(await explain(daemon.debugPort, { domain: "shop", descriptors: [] }), {
    status: 400,
    json: { error: "rate limit descriptor list must not be empty" },
  });
});

t.test("an xDS rule: the resource it came in and the snapshot's version", async (t) => {
  const { server, port } = await startManagementServer(t);
  server.setSnapshot("v7", [config("shop-rules", "shop", "user", "", 100, 3)]);
  const daemon = await startDaemon(xdsEnv(port));
  t.teardown(() => daemon.stop());
  let answer: Record<string, unknown> = {};
  await eventually("the snapshot applied", async () => {
    const one = { entries: [{ key: "user", value: "alice" }] };
    answer = (await explain(daemon.debugPort, { domain: "shop", descriptors: [one] })).json;
    return (answer.descriptors as unknown[] | undefined)?.length === 1 && answer.overallCode === "OK"
      ? (answer.descriptors as { rule: string | null }[])[0]!.rule !== null
      : false;
  });
  const descriptor = (answer.descriptors as Record<string, unknown>[])[0]!;
  t.strictSame(
    [
      answer.rules && (answer.rules as { source: string }).source,
      (answer.rules as { version: string }).version,
    ],
    ["xds", "v7"],
  );
  t.strictSame(
    [descriptor.rule, descriptor.origin],
    ["shop.user", { xdsResource: "shop-rules", version: "v7" }],
  );
});

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("a store that fails: 503 with the short reason clients see", async (t) => {
    const server = await startRedis(t);
    const daemon = await startDaemon({
      BACKEND_TYPE: "redis",
      REDIS_SOCKET_TYPE: "tcp",
      REDIS_URL: server.url,
      RUNTIME_ROOT: t.testdir({ config: { "shop.yaml": RULES } }),
    });
    t.teardown(() => daemon.stop());
    t.equal((await explain(daemon.debugPort, BODY)).status, 200);
    await server.kill();
    const failed = await explain(daemon.debugPort, BODY);
    t.equal(failed.status, 503);
    t.match(failed.json.error, /^redis: /);
  });
}
