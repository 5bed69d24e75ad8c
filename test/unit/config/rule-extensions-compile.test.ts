// How ratelimitd's rule extensions (docs/algorithms.md) compile into RateLimitRule: a rule
// without them has no extension fields at all (the engine takes the reference's path on their absence); a
// rule with any of them has algorithm, unitMultiplier, burst and limitIndex; a `rate_limits` list is its
// first limit carrying the others in `stacked`, all sharing the descriptor's key, stats and flags.
import t from "tap";
import { parseRuleYaml } from "../../../src/config/yaml/parse-rule-yaml.js";
import type { RateLimitRule } from "../../../src/engine/rule-set.js";
import { buildFixtures, compileRules } from "./config-fixtures.js";

const EXTENSION_FIELDS = ["algorithm", "unitMultiplier", "burst", "limitIndex", "stacked"];

function limitOf(yaml: string, composite: string): RateLimitRule | undefined {
  return compileRules([parseRuleYaml("api.yaml", yaml)])
    .domains.get("api")
    ?.exact.get(composite)?.limit;
}

/** The fields the engine reads, without stats and metadata. */
function fieldsOf(limit: RateLimitRule | undefined): Record<string, unknown> {
  const { stats: _stats, stacked, ...rest } = limit ?? ({} as RateLimitRule);
  return stacked === undefined ? rest : { ...rest, stacked: stacked.map(fieldsOf) };
}

t.test("plain rules have none of the extension fields", async (t) => {
  const rules = buildFixtures(["all-units.yaml", "dump.yaml"]);
  let seen = 0;
  const visit = (level: NonNullable<ReturnType<typeof rules.domains.get>>) => {
    for (const node of level.exact.values()) {
      if (node.limit !== undefined) {
        seen++;
        for (const field of EXTENSION_FIELDS) t.notOk(field in node.limit, `${node.fullKey} has no ${field}`);
      }
      if (node.children !== undefined) visit(node.children);
    }
  };
  for (const level of rules.domains.values()) visit(level);
  t.equal(seen, 12, "every configured limit was inspected");
});

t.test("a token bucket with burst over a 5-minute window", async (t) => {
  const limit = limitOf(
    "domain: api\ndescriptors:\n  - key: plan\n    value: free\n    shadow_mode: true\n" +
      "    rate_limit: { unit: minute, requests_per_unit: 100, algorithm: token_bucket, burst: 20, unit_multiplier: 5, name: free }\n",
    "plan_free",
  );
  t.strictSame(fieldsOf(limit), {
    requestsPerUnit: 100,
    unit: 2,
    name: "free",
    replaces: [],
    unlimited: false,
    shadowMode: true,
    quotaMode: false,
    detailedMetric: false,
    fullKey: "api.plan_free",
    metadata: undefined,
    algorithm: "token_bucket",
    unitMultiplier: 5,
    burst: 20,
    limitIndex: 0,
  });
  t.equal(limit?.stats.key, "api.plan_free");
});

t.test("defaults once any extension is written", async (t) => {
  const yaml = (fields: string) =>
    `domain: api\ndescriptors:\n  - key: k\n    rate_limit: { unit: second, requests_per_unit: 7, ${fields} }\n`;
  const pick = (limit: RateLimitRule | undefined) => ({
    algorithm: limit?.algorithm,
    unitMultiplier: limit?.unitMultiplier,
    burst: limit?.burst,
    limitIndex: limit?.limitIndex,
    stacked: limit?.stacked,
  });
  t.strictSame(pick(limitOf(yaml("algorithm: token_bucket"), "k")), {
    algorithm: "token_bucket",
    unitMultiplier: 1,
    burst: 7,
    limitIndex: 0,
    stacked: undefined,
  });
  t.strictSame(pick(limitOf(yaml("algorithm: sliding_window"), "k")), {
    algorithm: "sliding_window",
    unitMultiplier: 1,
    burst: 7,
    limitIndex: 0,
    stacked: undefined,
  });
  t.strictSame(pick(limitOf(yaml("unit_multiplier: 5"), "k")), {
    algorithm: "fixed_window",
    unitMultiplier: 5,
    burst: 7,
    limitIndex: 0,
    stacked: undefined,
  });
  // Writing the default explicitly is still an extension: the fields are set.
  t.equal(limitOf(yaml("algorithm: fixed_window"), "k")?.algorithm, "fixed_window");
});

t.test("a burst and a sustained limit stacked on one descriptor", async (t) => {
  const yaml =
    "domain: api\ndescriptors:\n  - key: user\n    quota_mode: true\n    detailed_metric: true\n" +
    "    metadata: { tier: gold }\n    rate_limits:\n" +
    "      - { name: burst, unit: second, requests_per_unit: 20, algorithm: token_bucket, burst: 40 }\n" +
    "      - { name: sustained, unit: hour, requests_per_unit: 1000, algorithm: sliding_window, replaces: [{ name: other }] }\n" +
    "      - { unit: minute, requests_per_unit: 300, unit_multiplier: 10 }\n";
  const limit = limitOf(yaml, "user");
  const shared = {
    unlimited: false,
    shadowMode: false,
    quotaMode: true,
    detailedMetric: true,
    fullKey: "api.user",
    metadata: { tier: "gold" },
  };
  t.strictSame(fieldsOf(limit), {
    requestsPerUnit: 20,
    unit: 1,
    name: "burst",
    replaces: [],
    ...shared,
    algorithm: "token_bucket",
    unitMultiplier: 1,
    burst: 40,
    limitIndex: 0,
    stacked: [
      {
        requestsPerUnit: 1000,
        unit: 3,
        name: "sustained",
        replaces: ["other"],
        ...shared,
        algorithm: "sliding_window",
        unitMultiplier: 1,
        burst: 1000,
        limitIndex: 1,
      },
      {
        requestsPerUnit: 300,
        unit: 2,
        name: "",
        replaces: [],
        ...shared,
        algorithm: "fixed_window",
        unitMultiplier: 10,
        burst: 300,
        limitIndex: 2,
      },
    ],
  });
  t.equal(limit?.stacked?.[0]?.stats, limit?.stats, "one set of stats for the descriptor");
  t.equal(limit?.stacked?.[1]?.stats, limit?.stats, "one set of stats for the descriptor");
});

t.test("a one-element rate_limits is a rate_limit with the extension fields set", async (t) => {
  const limit = limitOf(
    "domain: api\ndescriptors:\n  - key: k\n    rate_limits:\n      - { unit: minute, requests_per_unit: 3 }\n",
    "k",
  );
  t.strictSame(fieldsOf(limit), {
    requestsPerUnit: 3,
    unit: 2,
    name: "",
    replaces: [],
    unlimited: false,
    shadowMode: false,
    quotaMode: false,
    detailedMetric: false,
    fullKey: "api.k",
    metadata: undefined,
    algorithm: "fixed_window",
    unitMultiplier: 1,
    burst: 3,
    limitIndex: 0,
  });
  t.notOk(limit !== undefined && "stacked" in limit, "no stacked limits");
});

t.test("limits without a name may repeat in one list", async (t) => {
  const limit = limitOf(
    "domain: api\ndescriptors:\n  - key: k\n    rate_limits:\n" +
      "      - { unit: second, requests_per_unit: 3 }\n      - { unit: minute, requests_per_unit: 30 }\n",
    "k",
  );
  t.equal(limit?.stacked?.length, 1);
});
