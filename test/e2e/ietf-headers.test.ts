// LIMIT_RESPONSE_HEADERS_FORMAT=ietf through the built daemon (docs/response-headers.md):
// RateLimit-Policy and RateLimit on the gRPC fast path, through Envoy's own proto, and on /json, each parsed
// back with a Structured Fields parser. Token buckets give exact resets whatever the wall clock (a bucket
// one request below full fills again in one emission interval); the fixed window's reset is checked against
// the clock read around the request.
import { type Item, parseList } from "structured-headers";
import t, { type Test } from "tap";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { grpcUnary } from "../helpers/grpc-unary-client.js";
import { httpRequest } from "../helpers/http-request.js";

const RLS = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const RULES = `domain: x
descriptors:
  - key: tenant
    rate_limits:
      - { name: tenant_burst, unit: second, requests_per_unit: 20, algorithm: token_bucket }
      - { name: tenant_hourly, unit: hour, requests_per_unit: 1000, algorithm: token_bucket }
  - key: plain
    rate_limit: { unit: minute, requests_per_unit: 10 }
  - key: odd
    rate_limit: { name: 'a "quoted" \\ näme', unit: minute, requests_per_unit: 5, algorithm: token_bucket }
  - key: free
    rate_limit: { unlimited: true }
`;

interface Header {
  readonly key: string;
  readonly value: string;
}

/** Both fields of a response parsed back: each member's String and its parameters. */
function fields(t: Test, headers: readonly Header[]) {
  t.strictSame(
    headers.map((header) => header.key),
    ["RateLimit-Policy", "RateLimit"],
    "the two fields, once each",
  );
  const parse = (value: string) =>
    parseList(value).map((member) => {
      const [name, parameters] = member as Item;
      return [name, Object.fromEntries(parameters)];
    });
  return { policy: parse(headers[0]!.value), state: parse(headers[1]!.value) };
}

const untilMinuteEnds = () => 60 - (Math.floor(Date.now() / 1000) % 60);

/** `tenant`, `plain` (answered with the fixed window's reset), `odd`, `free`, one request's worth each. */
async function checkOne(t: Test, ask: (value: string) => Promise<readonly Header[]>, value: string) {
  const before = untilMinuteEnds();
  const headers = await ask(value);
  const after = untilMinuteEnds();
  const { policy, state } = fields(t, headers);
  t.strictSame(policy, [
    ["tenant_burst", { q: 20, w: 1 }],
    ["tenant_hourly", { q: 1000, w: 3600 }],
    ["x.plain", { q: 10, w: 60 }],
    ['a "quoted" \\ n%c3%a4me', { q: 5, w: 60 }],
  ]);
  const plain = state[2]![1] as { t: number };
  t.ok(plain.t === before || plain.t === after, `the fixed window's reset ${plain.t}: ${before} or ${after}`);
  t.strictSame(state, [
    // One token of 20 per second: back in 0.05 s, whole seconds rounded up.
    ["tenant_burst", { r: 19, t: 1 }],
    // 1000 per hour: a token every 3.6 s.
    ["tenant_hourly", { r: 999, t: 4 }],
    ["x.plain", { r: 9, t: plain.t }],
    // 5 per minute: a token every 12 s.
    ['a "quoted" \\ n%c3%a4me', { r: 4, t: 12 }],
  ]);
}

const descriptors = (value: string) =>
  ["tenant", "plain", "odd", "free"].map((key) => ({ entries: [{ key, value }] }));

t.test("the gRPC fast path, Envoy's own client and /json carry both fields", async (t) => {
  const daemon = await startDaemon({
    RUNTIME_ROOT: t.testdir({ config: { "x.yaml": RULES } }),
    LIMIT_RESPONSE_HEADERS_ENABLED: "true",
    LIMIT_RESPONSE_HEADERS_FORMAT: "ietf",
  });
  t.teardown(() => daemon.stop());
  const address = `127.0.0.1:${daemon.grpcPort}`;

  await t.test("gRPC (response_headers_to_add)", async (t) => {
    await checkOne(
      t,
      async (value) =>
        (
          await grpcUnary(address, RLS, RateLimitRequestSchema, RateLimitResponseSchema, {
            domain: "x",
            descriptors: descriptors(value),
          })
        ).responseHeadersToAdd,
      "grpc",
    );
  });

  await t.test("Envoy's proto (grpc-js, proto-loader)", async (t) => {
    const envoy = envoyRlsClient(address);
    t.teardown(() => envoy.close());
    await checkOne(
      t,
      async (value) =>
        (await envoy.shouldRateLimit({ domain: "x", descriptors: descriptors(value) }))
          .response_headers_to_add as Header[],
      "envoy",
    );
  });

  await t.test("/json (responseHeadersToAdd)", async (t) => {
    await checkOne(
      t,
      async (value) => {
        const reply = await httpRequest(daemon.httpPort, "/json", {
          method: "POST",
          body: JSON.stringify({ domain: "x", descriptors: descriptors(value) }),
        });
        t.equal(reply.status, 200);
        return JSON.parse(reply.body).responseHeadersToAdd as Header[];
      },
      "json",
    );
  });

  await t.test("over limit: r=0, t until the request fits again", async (t) => {
    const ask = async () =>
      grpcUnary(address, RLS, RateLimitRequestSchema, RateLimitResponseSchema, {
        domain: "x",
        descriptors: [{ entries: [{ key: "odd", value: "over" }] }],
      });
    for (let i = 0; i < 5; i++) await ask();
    const refused = await ask();
    t.equal(refused.overallCode, 2, "OVER_LIMIT");
    const { policy, state } = fields(t, refused.responseHeadersToAdd);
    t.strictSame(policy, [['a "quoted" \\ n%c3%a4me', { q: 5, w: 60 }]]);
    // Emptied by 5 requests within a second: the 6th fits again once a token is back, 12 s after the
    // first less the time since, rounded up.
    const left = state[0]![1] as { r: number; t: number };
    t.equal(left.r, 0);
    t.ok(left.t === 12 || left.t === 11, `t ${left.t}`);
  });

  await t.test("only unlimited and unmatched descriptors: no headers", async (t) => {
    const reply = await grpcUnary(address, RLS, RateLimitRequestSchema, RateLimitResponseSchema, {
      domain: "x",
      descriptors: [
        { entries: [{ key: "free", value: "v" }] },
        { entries: [{ key: "nomatch", value: "v" }] },
      ],
    });
    t.strictSame(reply.responseHeadersToAdd, []);
  });
});
