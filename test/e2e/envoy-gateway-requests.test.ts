// What Envoy sends under Envoy Gateway and Envoy AI Gateway, answered as envoyproxy/ratelimit answers it
// (src/service/ratelimit.go, src/limiter/base_limiter.go, src/config/config_impl.go there), in Envoy
// Gateway's deployment (test/e2e/envoy-gateway-environment.ts: xDS over mTLS, mTLS clients, Redis,
// Prometheus): per-descriptor hits_addend, limit overrides, the fields Envoy turns into its
// `x-ratelimit-*` headers, shadow_mode and quota_mode rules pushed over xDS, and with the settings Envoy AI
// Gateway adds, RateLimit-* response headers and dynamic_metadata with the rules' metadata.
import t from "tap";
import type {
  RateLimitResponse,
  RateLimitResponse_DescriptorStatus,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { RateLimitUnit as OverrideUnit } from "../../src/gen/envoy/type/v3/ratelimit_unit_pb.js";
import { shouldRateLimitWith } from "../helpers/grpc-tls-client.js";
import { parsePrometheusText, seriesValue } from "../helpers/prometheus-text.js";
import { requireBinaries } from "../helpers/redis-servers.js";
import { stayInsideWindow } from "../helpers/window-guard.js";
import { eventually } from "../helpers/xds-fixtures.js";
import {
  type DescriptorInit,
  decision,
  envoyGatewayEnvironment,
  gatewayDomain,
  ruleDescriptor,
} from "./envoy-gateway-environment.js";

const OK = 1;
const OVER_LIMIT = 2;
const MINUTE = 2;
const HOUR = 3;

const DOMAIN = "default/eg/http";
const ADDEND = "httproute/default/request-cost/rule/0/match/0";
const OVERRIDE = "httproute/default/override/rule/0/match/0";
const DRAFT = "httproute/default/draft-headers/rule/0/match/0";
const SHADOW = "httproute/default/shadow/rule/0/match/0";
const QUOTA = "httproute/default/quota/rule/0/match/0";

const AI_DOMAIN = "default/envoy-ai-gateway-basic/http";
const TOKENS = "httproute/default/llm/rule/0/match/0";
const AI_OVERRIDE = "httproute/default/llm-override/rule/0/match/0";

const UNTIL_RESET = "until the end of the window";

/** A call, and the values duration_until_reset may take for a window of `unitSeconds` while it ran. */
async function timed(call: () => Promise<RateLimitResponse>) {
  const before = Math.floor(Date.now() / 1000);
  const response = await call();
  const after = Math.floor(Date.now() / 1000);
  const resets = (unitSeconds: number) => [
    unitSeconds - (before % unitSeconds),
    unitSeconds - (after % unitSeconds),
  ];
  return { response, resets };
}

/** A status as plain data; a reset among `resets` (the clock may tick during the call) reads UNTIL_RESET. */
function statusView(status: RateLimitResponse_DescriptorStatus, resets: readonly number[]) {
  const reset = Number(status.durationUntilReset?.seconds ?? 0);
  return {
    code: status.code,
    currentLimit: status.currentLimit && {
      name: status.currentLimit.name,
      requestsPerUnit: status.currentLimit.requestsPerUnit,
      unit: status.currentLimit.unit,
    },
    limitRemaining: status.limitRemaining,
    durationUntilReset: resets.includes(reset) ? UNTIL_RESET : reset,
  };
}

/** Response headers as `[key, value]`; a RateLimit-Reset among `resets` reads UNTIL_RESET. */
function headersView(response: RateLimitResponse, resets: readonly number[]) {
  return response.responseHeadersToAdd.map((h) => [
    h.key,
    h.key === "RateLimit-Reset" && resets.includes(Number(h.value)) ? UNTIL_RESET : h.value,
  ]);
}

const entriesOf = (route: string, rule: number) => [
  `${route}=${route}`,
  `rule-${rule}-match-0=rule-${rule}-match-0`,
];

if (requireBinaries(t, ["redis-server", "redis-cli", "openssl"])) {
  t.test("Envoy's requests under Envoy Gateway, answered as the reference answers them", async (t) => {
    const gateway = await envoyGatewayEnvironment(t);
    const { controlPlane, envoy, redis } = gateway;
    gateway.controlPlane.setSnapshot("v1", [
      gatewayDomain(DOMAIN, {
        [ADDEND]: [{ requests: 10 }],
        [OVERRIDE]: [{ requests: 100 }],
        [DRAFT]: [{ requests: 5 }],
        [SHADOW]: [{ requests: 1, shadowMode: true }],
        [QUOTA]: [
          { requests: 2, quotaMode: true },
          { requests: 10, quotaMode: true },
        ],
      }),
      gatewayDomain(AI_DOMAIN, {
        [TOKENS]: [
          { requests: 1000, metadata: { ai_gateway: { limit_type: "tokens" } } },
          { requests: 5, metadata: { ai_gateway: { limit_type: "requests", tier: "free" } } },
        ],
        [AI_OVERRIDE]: [{ requests: 100 }],
      }),
    ]);
    // Envoy Gateway's own environment: LIMIT_RESPONSE_HEADERS_ENABLED and RESPONSE_DYNAMIC_METADATA unset
    // (Envoy builds its x-ratelimit-* headers itself from each status, DRAFT_VERSION_03).
    const eg = await gateway.startRatelimit();
    // The same environment plus what Envoy AI Gateway adds through the EnvoyGateway resource's
    // rateLimitDeployment env (RESPONSE_DYNAMIC_METADATA=true), and the RateLimit-* response headers
    // (docs/settings.md "Responses, modes, health"), which Envoy Gateway never sets: a second daemon, same Redis and
    // control plane.
    const ai = await gateway.startRatelimit({
      RESPONSE_DYNAMIC_METADATA: "true",
      LIMIT_RESPONSE_HEADERS_ENABLED: "true",
    });
    await eventually(
      "v1 ACKed by both",
      () =>
        controlPlane.received.filter((r) => r.versionInfo === "v1" && r.errorMessage === undefined).length >=
        2,
    );
    const ask = (daemon: typeof eg, domain: string, descriptors: DescriptorInit[]) =>
      timed(() => shouldRateLimitWith(daemon.address, envoy, { domain, descriptors }));

    // The minute window first, then everything else inside one hour.
    await stayInsideWindow(3600, 40);
    await stayInsideWindow(60, 10);

    t.test("a limit override on a descriptor replaces the rule's limit", async (t) => {
      const override = { limit: { requestsPerUnit: 2, unit: OverrideUnit.MINUTE } };
      const views = [];
      for (let i = 0; i < 3; i++) {
        const { response, resets } = await ask(eg, DOMAIN, [ruleDescriptor(OVERRIDE, 0, override)]);
        views.push([response.overallCode, ...response.statuses.map((s) => statusView(s, resets(60)))]);
      }
      const status = (code: number, limitRemaining: number) => ({
        code,
        currentLimit: { name: "", requestsPerUnit: 2, unit: MINUTE },
        limitRemaining,
        durationUntilReset: UNTIL_RESET,
      });
      t.strictSame(
        views,
        [
          [OK, status(OK, 1)],
          [OK, status(OK, 0)],
          [OVER_LIMIT, status(OVER_LIMIT, 0)],
        ],
        "2 per MINUTE from the override, not the rule's 100 per HOUR",
      );
    });

    t.test("per-descriptor hits_addend counts that many hits", async (t) => {
      const answers = [];
      for (let i = 0; i < 4; i++)
        answers.push(
          decision((await ask(eg, DOMAIN, [ruleDescriptor(ADDEND, 0, { hitsAddend: 3n })])).response),
        );
      t.strictSame(
        answers,
        [
          [OK, [OK, 7]],
          [OK, [OK, 4]],
          [OK, [OK, 1]],
          [OVER_LIMIT, [OVER_LIMIT, 0]],
        ],
        "10 per hour, 3 a request: 7, 4, 1 remaining, then over",
      );
      const hourStart = Math.floor(Date.now() / 3_600_000) * 3600;
      const key = `${DOMAIN}_${ADDEND}_${ADDEND}_rule-0-match-0_rule-0-match-0_${hourStart}`;
      t.equal(await redis.cli("GET", key), "12", "the Redis counter (the reference's key) holds 4 × 3");
    });

    t.test("the status fields Envoy's DRAFT_VERSION_03 x-ratelimit headers are built from", async (t) => {
      const { response, resets } = await ask(eg, DOMAIN, [ruleDescriptor(DRAFT)]);
      t.strictSame(
        response.statuses.map((s) => statusView(s, resets(3600))),
        [
          {
            code: OK,
            currentLimit: { name: "", requestsPerUnit: 5, unit: HOUR },
            limitRemaining: 4,
            durationUntilReset: UNTIL_RESET,
          },
        ],
        "current_limit (x-ratelimit-limit), limit_remaining, duration_until_reset (x-ratelimit-reset)",
      );
      t.strictSame(
        response.responseHeadersToAdd,
        [],
        "no RateLimit-* headers: Envoy Gateway leaves them off",
      );
      t.equal(response.dynamicMetadata, undefined, "no dynamic_metadata: Envoy Gateway leaves it off");
    });

    t.test("a shadow_mode rule over its limit answers OK and counts shadow_mode", async (t) => {
      const answers = [];
      for (let i = 0; i < 3; i++)
        answers.push(decision((await ask(eg, DOMAIN, [ruleDescriptor(SHADOW)])).response));
      t.strictSame(answers, [
        [OK, [OK, 0]],
        [OK, [OK, 0]],
        [OK, [OK, 0]],
      ]);
    });

    t.test("quota_mode rules: over limit only when every quota descriptor is", async (t) => {
      const answers = [];
      for (let i = 0; i < 3; i++)
        answers.push(decision((await ask(eg, DOMAIN, [ruleDescriptor(QUOTA, 0)])).response));
      answers.push(
        decision((await ask(eg, DOMAIN, [ruleDescriptor(QUOTA, 0), ruleDescriptor(QUOTA, 1)])).response),
      );
      t.strictSame(answers, [
        [OK, [OK, 1]],
        [OK, [OK, 0]],
        [OVER_LIMIT, [OVER_LIMIT, 0]],
        [OK, [OVER_LIMIT, 0], [OK, 9]],
      ]);
    });

    t.test("Prometheus: the hits, near, over and shadow counts of those rules", async (t) => {
      const families = parsePrometheusText(
        await (await fetch(`http://127.0.0.1:${eg.prometheusPort}/metrics`)).text(),
      );
      const stats = (route: string) => {
        const labels = { domain: DOMAIN, key1: `${route}_${route}`, key2: "rule-0-match-0_rule-0-match-0" };
        const value = (name: string) => seriesValue(families, `ratelimit_service_rate_limit_${name}`, labels);
        return {
          total_hits: value("total_hits"),
          within_limit: value("within_limit"),
          near_limit: value("near_limit"),
          over_limit: value("over_limit"),
          shadow_mode: value("shadow_mode"),
        };
      };
      t.strictSame(
        stats(ADDEND),
        { total_hits: 12, within_limit: 9, near_limit: 2, over_limit: 2, shadow_mode: 0 },
        "hits_addend 3: hits counted in threes, near and over limit split at the thresholds (8, 10)",
      );
      t.strictSame(
        stats(SHADOW),
        { total_hits: 3, within_limit: 1, near_limit: 1, over_limit: 2, shadow_mode: 2 },
        "shadow_mode: both hits over the limit counted",
      );
    });

    t.test("Envoy AI Gateway: token costs, RateLimit-* headers and dynamic_metadata", async (t) => {
      // On the request: the token limit checked without counting (hits_addend 0), the request limit counted.
      const check = await ask(ai, AI_DOMAIN, [
        ruleDescriptor(TOKENS, 0, { hitsAddend: 0n }),
        ruleDescriptor(TOKENS, 1),
      ]);
      t.strictSame(decision(check.response), [OK, [OK, 1000], [OK, 4]]);
      t.strictSame(
        headersView(check.response, check.resets(3600)),
        [
          ["RateLimit-Limit", "5"],
          ["RateLimit-Remaining", "4"],
          ["RateLimit-Reset", UNTIL_RESET],
        ],
        "headers of the descriptor with the least remaining",
      );
      t.strictSame(
        check.response.dynamicMetadata,
        {
          domain: AI_DOMAIN,
          descriptors: [{ entries: entriesOf(TOKENS, 0), hitsAddend: 0 }, { entries: entriesOf(TOKENS, 1) }],
          metadata: { ai_gateway: { limit_type: "tokens", tier: "free" } },
        },
        "domain, descriptors, and the passed rules' metadata merged (first wins, objects merge)",
      );

      // On the response: the tokens used.
      const used = await ask(ai, AI_DOMAIN, [ruleDescriptor(TOKENS, 0, { hitsAddend: 250n })]);
      t.strictSame(decision(used.response), [OK, [OK, 750]]);
      t.strictSame(headersView(used.response, used.resets(3600)), [
        ["RateLimit-Limit", "1000"],
        ["RateLimit-Remaining", "750"],
        ["RateLimit-Reset", UNTIL_RESET],
      ]);
      t.strictSame(used.response.dynamicMetadata, {
        domain: AI_DOMAIN,
        descriptors: [{ entries: entriesOf(TOKENS, 0), hitsAddend: 250 }],
        metadata: { ai_gateway: { limit_type: "tokens" } },
      });

      const over = await ask(ai, AI_DOMAIN, [ruleDescriptor(TOKENS, 0, { hitsAddend: 800n })]);
      t.strictSame(decision(over.response), [OVER_LIMIT, [OVER_LIMIT, 0]]);
      t.strictSame(headersView(over.response, over.resets(3600)), [
        ["RateLimit-Limit", "1000"],
        ["RateLimit-Remaining", "0"],
        ["RateLimit-Reset", UNTIL_RESET],
      ]);
      t.strictSame(
        over.response.dynamicMetadata,
        { domain: AI_DOMAIN, descriptors: [{ entries: entriesOf(TOKENS, 0), hitsAddend: 800 }] },
        "an over-limit descriptor contributes no metadata",
      );

      const override = { limit: { requestsPerUnit: 2, unit: OverrideUnit.HOUR } };
      const overridden = await ask(ai, AI_DOMAIN, [ruleDescriptor(AI_OVERRIDE, 0, override)]);
      t.strictSame(
        [
          overridden.response.overallCode,
          ...overridden.response.statuses.map((s) => statusView(s, overridden.resets(3600))),
        ],
        [
          OK,
          {
            code: OK,
            currentLimit: { name: "", requestsPerUnit: 2, unit: HOUR },
            limitRemaining: 1,
            durationUntilReset: UNTIL_RESET,
          },
        ],
      );
      t.strictSame(headersView(overridden.response, overridden.resets(3600)), [
        ["RateLimit-Limit", "2"],
        ["RateLimit-Remaining", "1"],
        ["RateLimit-Reset", UNTIL_RESET],
      ]);
      t.strictSame(
        overridden.response.dynamicMetadata,
        {
          domain: AI_DOMAIN,
          descriptors: [{ entries: entriesOf(AI_OVERRIDE, 0), limit: "requests_per_unit:2 unit:HOUR" }],
        },
        "the override as the text of the message",
      );
    });
  });
}
