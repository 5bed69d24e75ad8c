// xDS RateLimitConfig ⇄ the YAML model (the reference's api/ratelimit/config/ratelimit/v3/rls_conf.proto):
// what the client builds from pushed resources, and what the management server sends for YAML files.
import { create } from "@bufbuild/protobuf";
import t from "tap";
import { buildRuleSet } from "../../../src/config/build-rule-set.js";
import { dumpRuleSet } from "../../../src/config/dump-rule-set.js";
import {
  configFromRuleDocument,
  ruleDocumentFromConfig,
} from "../../../src/config/xds/rate-limit-config-conversion.js";
import { parseRuleYaml } from "../../../src/config/yaml/parse-rule-yaml.js";
import { RateLimitConfigSchema } from "../../../src/gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";

const registry = new StatsRegistry({ maxDynamicKeys: 10 });
const build = (
  mergeDomainConfig: boolean,
  ...configs: ReturnType<typeof create<typeof RateLimitConfigSchema>>[]
) =>
  dumpRuleSet(
    buildRuleSet(configs.map(ruleDocumentFromConfig), {
      mergeDomainConfig,
      statsFor: (k) => registry.pinnedRuleStats(k),
    }),
  );

t.test(
  "a deeper tree: units by enum name, unlimited children as UNKNOWN, shadow and quota flags",
  async (t) => {
    const config = create(RateLimitConfigSchema, {
      name: "foo",
      domain: "foo",
      descriptors: [
        {
          key: "k1",
          value: "v1",
          rateLimit: { unit: 2, requestsPerUnit: 3 },
          descriptors: [
            { key: "k2", rateLimit: { unlimited: true } },
            { key: "k2", value: "v2", rateLimit: { unit: 7, requestsPerUnit: 9 } },
          ],
        },
        {
          key: "j1",
          value: "v2",
          descriptors: [
            {
              key: "j2",
              value: "v2",
              shadowMode: true,
              quotaMode: true,
              rateLimit: { unit: 4, requestsPerUnit: 15 },
            },
          ],
        },
      ],
    });
    t.equal(
      build(false, config),
      "foo.k1_v1: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false\n" +
        "foo.k1_v1.k2: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false\n" +
        "foo.k1_v1.k2_v2: unit=WEEK requests_per_unit=9, shadow_mode: false, quota_mode: false\n" +
        "foo.j1_v2.j2_v2: unit=DAY requests_per_unit=15, shadow_mode: true, quota_mode: true\n",
    );
  },
);

t.test(
  "validation as for YAML: UNKNOWN without unlimited, a unit with unlimited, duplicate domains",
  async (t) => {
    const unknown = create(RateLimitConfigSchema, {
      name: "r1",
      domain: "d",
      descriptors: [{ key: "k", rateLimit: { requestsPerUnit: 1 } }],
    });
    t.throws(() => build(false, unknown), { message: "r1: invalid rate limit unit 'UNKNOWN'" });
    const both = create(RateLimitConfigSchema, {
      name: "r2",
      domain: "d",
      descriptors: [{ key: "k", rateLimit: { unlimited: true, unit: 1 } }],
    });
    t.throws(() => build(false, both), { message: "r2: should not specify rate limit unit when unlimited" });
    const first = create(RateLimitConfigSchema, {
      name: "foo-1",
      domain: "foo",
      descriptors: [{ key: "k1", value: "v1", rateLimit: { unit: 2, requestsPerUnit: 10 } }],
    });
    const second = create(RateLimitConfigSchema, {
      name: "foo-2",
      domain: "foo",
      descriptors: [{ key: "k1", value: "v2", rateLimit: { unit: 2, requestsPerUnit: 100 } }],
    });
    t.throws(() => build(false, first, second), { message: "foo-2: duplicate domain 'foo' in config file" });
    t.equal(
      build(true, first, second),
      "foo.k1_v1: unit=MINUTE requests_per_unit=10, shadow_mode: false, quota_mode: false\n" +
        "foo.k1_v2: unit=MINUTE requests_per_unit=100, shadow_mode: false, quota_mode: false\n",
    );
  },
);

t.test(
  "YAML to xDS and back keeps the rules; value_to_metric and share_threshold are reported as dropped",
  async (t) => {
    const yaml = `domain: api
descriptors:
  - key: plan
    value: free
    metadata: { route: pool-a, weight: 2 }
    rate_limit: { unit: day, requests_per_unit: 1000, name: daily, replaces: [{ name: other }] }
  - key: path
    value: files/*
    share_threshold: true
    value_to_metric: true
    rate_limit: { unit: minute, requests_per_unit: 60 }
`;
    const document = parseRuleYaml("api.yaml", yaml);
    const { config, dropped } = configFromRuleDocument(document);
    t.strictSame(dropped, ["api.path_files/*: value_to_metric", "api.path_files/*: share_threshold"]);
    const back = ruleDocumentFromConfig(config);
    t.equal(back.name, "api.yaml");
    t.strictSame(back.descriptors[0], {
      ...document.descriptors[0],
      rateLimit: { ...document.descriptors[0]!.rateLimit!, unit: "DAY" },
    });
    t.equal(back.descriptors[1]!.shareThreshold, false);
  },
);

t.test(
  "the extension fields (1000 and up): algorithm, burst, unit_multiplier and rate_limits convert and validate",
  async (t) => {
    const config = create(RateLimitConfigSchema, {
      name: "ext",
      domain: "ext",
      descriptors: [
        {
          key: "plan",
          value: "bucket",
          rateLimit: {
            unit: 2,
            requestsPerUnit: 100,
            algorithm: "token_bucket",
            burst: 20,
            unitMultiplier: 5,
          },
        },
        {
          key: "user",
          rateLimits: [
            { name: "burst", unit: 1, requestsPerUnit: 20, algorithm: "token_bucket", burst: 40 },
            { name: "sustained", unit: 3, requestsPerUnit: 1000, algorithm: "sliding_window" },
          ],
        },
        { key: "plain", rateLimit: { unit: 2, requestsPerUnit: 3 } },
      ],
    });
    const document = ruleDocumentFromConfig(config);
    t.strictSame(document.descriptors[0]!.rateLimit, {
      requestsPerUnit: 100,
      unit: "MINUTE",
      unlimited: false,
      name: "",
      replaces: [],
      algorithm: "token_bucket",
      burst: 20,
      unitMultiplier: 5,
    });
    t.strictSame(document.descriptors[1]!.rateLimits, [
      {
        requestsPerUnit: 20,
        unit: "SECOND",
        unlimited: false,
        name: "burst",
        replaces: [],
        algorithm: "token_bucket",
        burst: 40,
      },
      {
        requestsPerUnit: 1000,
        unit: "HOUR",
        unlimited: false,
        name: "sustained",
        replaces: [],
        algorithm: "sliding_window",
      },
    ]);
    // Zero values and an empty list are "not set": a plain descriptor keeps the reference's shape.
    t.strictSame(document.descriptors[2]!.rateLimit, {
      requestsPerUnit: 3,
      unit: "MINUTE",
      unlimited: false,
      name: "",
      replaces: [],
    });
    t.notOk("rateLimits" in document.descriptors[2]!, "no rate_limits on a plain descriptor");
    t.equal(
      build(false, config),
      "ext.plan_bucket: unit=MINUTE requests_per_unit=100, shadow_mode: false, quota_mode: false, " +
        "algorithm=token_bucket, burst=20, unit_multiplier=5\n" +
        "ext.user rate_limits[0]: unit=SECOND requests_per_unit=20, shadow_mode: false, quota_mode: false, " +
        "algorithm=token_bucket, burst=40, unit_multiplier=1\n" +
        "ext.user rate_limits[1]: unit=HOUR requests_per_unit=1000, shadow_mode: false, quota_mode: false, " +
        "algorithm=sliding_window, unit_multiplier=1\n" +
        "ext.plain: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false\n",
    );
    const both = create(RateLimitConfigSchema, {
      name: "r3",
      domain: "d",
      descriptors: [
        {
          key: "k",
          rateLimit: { unit: 1, requestsPerUnit: 1 },
          rateLimits: [{ unit: 3, requestsPerUnit: 10 }],
        },
      ],
    });
    t.throws(() => build(false, both), {
      message: "r3: descriptor 'd.k' has both rate_limit and rate_limits: use one",
    });
    const burstOnWindow = create(RateLimitConfigSchema, {
      name: "r4",
      domain: "d",
      descriptors: [{ key: "k", rateLimit: { unit: 1, requestsPerUnit: 1, burst: 5 } }],
    });
    t.throws(() => build(false, burstOnWindow), {
      message: "r4: rate_limit of 'd.k': burst applies only to algorithm token_bucket, not fixed_window",
    });
  },
);

t.test("YAML with the extensions to xDS and back; values a uint32 cannot carry are reported", async (t) => {
  const yaml = `domain: ext
descriptors:
  - key: plan
    rate_limit: { unit: minute, requests_per_unit: 100, algorithm: token_bucket, burst: 20, unit_multiplier: 5 }
  - key: user
    rate_limits:
      - { name: burst, unit: second, requests_per_unit: 20, algorithm: token_bucket, burst: 40 }
      - { name: sustained, unit: hour, requests_per_unit: 1000 }
  - key: odd
    rate_limit: { unit: minute, requests_per_unit: 1, algorithm: token_bucket, burst: 2.5 }
`;
  const document = parseRuleYaml("ext.yaml", yaml);
  const { config, dropped } = configFromRuleDocument(document);
  t.strictSame(dropped, ["ext.odd: rate_limit.burst 2.5"]);
  const back = ruleDocumentFromConfig(config);
  t.strictSame(back.descriptors[0]!.rateLimit, { ...document.descriptors[0]!.rateLimit!, unit: "MINUTE" });
  t.strictSame(back.descriptors[1]!.rateLimits, [
    { ...document.descriptors[1]!.rateLimits![0]!, unit: "SECOND" },
    { ...document.descriptors[1]!.rateLimits![1]!, unit: "HOUR" },
  ]);
});
