// Micro-benchmarks of the engine and the wire codec, per call. Needs a built dist/.
// Usage: node micro/engine.mjs   (prints ns/op for each case; --json for machine output)
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { buildRuleSet } from "../../dist/src/config/build-rule-set.js";
import { parseRuleYaml } from "../../dist/src/config/yaml/parse-rule-yaml.js";
import { cacheKeyFor } from "../../dist/src/engine/cache-key.js";
import { DecisionEngine } from "../../dist/src/engine/decision-engine.js";
import { matchLimit } from "../../dist/src/engine/rule-matcher.js";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../dist/src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { StatsRegistry } from "../../dist/src/observability/stats-registry.js";
import { rateLimitResponseFromDecision } from "../../dist/src/transports/rate-limit-response.js";
import { rateLimitRequest } from "../lib/frames.mjs";
import { printNsPerOp } from "../lib/ns-per-op.mjs";

const optional = async (path) => import(path).catch(() => undefined);
const codec = await optional("../../dist/src/transports/grpc/rls-codec.js");

const yaml = `domain: bench
descriptors:
  - key: k0
    rate_limit: { unit: hour, requests_per_unit: 1000 }
  - key: remote_address
    descriptors:
      - key: path
        value: /api/*
        rate_limit: { unit: minute, requests_per_unit: 10 }
`;
const registry = new StatsRegistry({ maxDynamicKeys: 1000 });
const rules = buildRuleSet([parseRuleYaml("bench.yaml", yaml)], {
  mergeDomainConfig: false,
  statsFor: (key) => registry.pinnedRuleStats(key),
});
const root = rules.domains.get("bench");
const engine = new DecisionEngine({
  nearLimitRatio: 0.8,
  cacheKeyPrefix: "",
  expirationJitterMaxSeconds: 300,
  shadowMode: false,
  quotaMode: false,
  responseHeaders: undefined,
  dynamicMetadata: false,
  localCache: undefined,
  stats: registry,
  random: Math.random,
});
const entriesExact = [{ key: "k0", value: "v" }];
const entriesWildcard = [
  { key: "remote_address", value: "10.1.2.3" },
  { key: "path", value: "/api/users" },
];
const request1 = rateLimitRequest(1);
const request5 = rateLimitRequest(5);
const bytes1 = toBinary(RateLimitRequestSchema, request1);
const decision = engine.complete(engine.plan(rules, request1, 1_800_000_000), [1], 1_800_000_000);

// The extensions (docs/algorithms.md): the same calls for sliding windows and token buckets.
const extended = buildRuleSet(
  [
    parseRuleYaml(
      "extensions.yaml",
      `domain: bench
descriptors:
${[0, 1, 2, 3, 4]
  .map(
    (i) => `  - key: sw${i}
    rate_limit: { unit: hour, requests_per_unit: 1000, algorithm: sliding_window }
  - key: tb${i}
    rate_limit: { unit: hour, requests_per_unit: 1000, algorithm: token_bucket }`,
  )
  .join("\n")}
`,
    ),
  ],
  { mergeDomainConfig: false, statsFor: (key) => registry.pinnedRuleStats(key) },
);
const NOW_MS = 1_800_000_123_456;
const decideExtended = (request, values) =>
  engine.complete(
    engine.plan(extended, request, Math.floor(NOW_MS / 1000), NOW_MS),
    values,
    Math.floor(NOW_MS / 1000),
    NOW_MS,
  );
const sliding1 = rateLimitRequest(1, "sw");
const sliding5 = rateLimitRequest(5, "sw");
const bucket1 = rateLimitRequest(1, "tb");
const bucket5 = rateLimitRequest(5, "tb");
const twice = (values) => values.flatMap((v) => [v, v]);

const cases = {
  "match: one exact entry": () => matchLimit(root, "bench", entriesExact, registry),
  "match: two levels, wildcard": () => matchLimit(root, "bench", entriesWildcard, registry),
  "cache key: two entries": () => cacheKeyFor("", "bench", entriesWildcard, undefined, 1_800_000_000),
  "engine plan + complete, 1 descriptor": () =>
    engine.complete(engine.plan(rules, request1, 1_800_000_000), [1], 1_800_000_000),
  "engine plan + complete, 5 descriptors": () =>
    engine.complete(engine.plan(rules, request5, 1_800_000_000), [1, 1, 1, 1, 1], 1_800_000_000),
  "engine plan + complete, sliding window, 1 descriptor": () => decideExtended(sliding1, [1, 1]),
  "engine plan + complete, sliding window, 5 descriptors": () =>
    decideExtended(sliding5, twice([1, 1, 1, 1, 1])),
  "engine plan + complete, token bucket, 1 descriptor": () => decideExtended(bucket1, [1, 3_600_000]),
  "engine plan + complete, token bucket, 5 descriptors": () =>
    decideExtended(bucket5, [1, 3_600_000, 1, 3_600_000, 1, 3_600_000, 1, 3_600_000, 1, 3_600_000]),
  "stats: counter add": () => registry.globalShadowMode.add(1),
  "protobuf-es: decode request (1 descriptor)": () => fromBinary(RateLimitRequestSchema, bytes1),
  "protobuf-es: build + encode response": () =>
    toBinary(RateLimitResponseSchema, rateLimitResponseFromDecision(decision)),
  ...(codec
    ? {
        "rls-codec: decode request (1 descriptor)": () => codec.decodeRateLimitRequest(bytes1),
        "rls-codec: encode framed response": () => codec.encodeRateLimitResponseFrame(decision),
      }
    : {}),
};

printNsPerOp(cases);
