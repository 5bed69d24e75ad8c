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
