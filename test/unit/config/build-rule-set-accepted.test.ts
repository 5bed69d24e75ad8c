// Configurations the reference's src/config/config_impl.go accepts — every unit spelling (second…year, week,
// any case), unlimited with requests_per_unit but no unit, missing requests_per_unit = 0, whitelist
// descriptors, the flat key whitelist (`unit:` at the root), metadata on the rule, and MERGE_DOMAIN_CONFIG
// merging top-level descriptors of several files.
import t from "tap";
import type { RuleNode, RuleSet } from "../../../src/engine/rule-set.js";
import { buildFixtures } from "./config-fixtures.js";

/** The configured node at `path` (composite keys, e.g. ["key1_value1", "subkey1"]) of `domain`. */
function nodeAt(rules: RuleSet, domain: string, path: readonly string[]): RuleNode | undefined {
  let level = rules.domains.get(domain);
  let node: RuleNode | undefined;
  for (const composite of path) {
    node = level?.exact.get(composite);
    level = node?.children;
  }
  return node;
}

t.test("every unit, any case, maps to RateLimitResponse.RateLimit.Unit", async (t) => {
  const rules = buildFixtures(["all-units.yaml"]);
  // SECOND 1, MINUTE 2, HOUR 3, DAY 4, MONTH 5, YEAR 6, WEEK 7 (rls.proto).
  const expected: [string, number, number][] = [
    ["second", 1, 1],
    ["minute", 2, 2],
    ["hour", 3, 3],
    ["day", 4, 4],
    ["week", 7, 5],
    ["month", 5, 6],
    ["year", 6, 7],
  ];
  for (const [key, unit, requestsPerUnit] of expected) {
    const limit = nodeAt(rules, "test-domain", [key])?.limit;
    t.equal(limit?.unit, unit, `${key} unit`);
    t.equal(limit?.requestsPerUnit, requestsPerUnit, `${key} requests_per_unit`);
    t.equal(limit?.unlimited, false, `${key} is limited`);
  }
});

t.test("unlimited with requests_per_unit and no unit is accepted (unit UNKNOWN)", async (t) => {
  const limit = nodeAt(buildFixtures(["unlimited-with-requests-per-unit.yaml"]), "test-domain", [
    "key1",
  ])?.limit;
  t.equal(limit?.unlimited, true);
  t.equal(limit?.unit, 0);
  t.equal(limit?.requestsPerUnit, 10);
});

t.test("requests_per_unit missing is 0 (blocks everything)", async (t) => {
  const limit = nodeAt(buildFixtures(["missing-requests-per-unit.yaml"]), "test-domain", ["key1"])?.limit;
  t.equal(limit?.requestsPerUnit, 0);
  t.equal(limit?.unit, 1);
});

t.test("a descriptor without rate_limit and without children is a whitelist entry", async (t) => {
  const node = nodeAt(buildFixtures(["whitelist-descriptor.yaml"]), "test-domain", ["internal_health-check"]);
  t.ok(node, "the descriptor is configured");
  t.equal(node?.limit, undefined);
  t.equal(node?.children, undefined);
  t.equal(node?.fullKey, "test-domain.internal_health-check");
});

t.test(
  "`unit:` at the root is accepted and ignored; a descriptor-level requests_per_unit sets no limit",
  async (t) => {
    const rules = buildFixtures(["unit-at-root.yaml"]);
    t.strictSame([...rules.domains.keys()], ["test-domain"]);
    const node = nodeAt(rules, "test-domain", ["key1"]);
    t.ok(node, "the descriptor is configured");
    t.equal(node?.limit, undefined);
  },
);

t.test("a configured rule: full key, stats key, flags, name, replaces and metadata", async (t) => {
  const rules = buildFixtures(["dump.yaml", "metadata.yaml"]);
  const limit = nodeAt(rules, "foo", ["j1_v2", "j2_v2"])?.limit;
  t.equal(limit?.fullKey, "foo.j1_v2.j2_v2");
  t.equal(limit?.stats.key, "foo.j1_v2.j2_v2");
  t.equal(limit?.shadowMode, true);
  t.equal(limit?.quotaMode, true);
  t.equal(limit?.name, "daily");
  t.strictSame(limit?.replaces, ["weekly"]);
  const withMetadata = nodeAt(rules, "test-domain", ["key1"])?.limit;
  t.strictSame(withMetadata?.metadata, {
    service_with_quota: { name: "service_2", weight: 3, ratio: 0.5 },
    tags: ["a", 1, { enabled: true }],
    nothing: null,
  });
});

t.test("MERGE_DOMAIN_CONFIG merges the top-level descriptors of two files", async (t) => {
  const rules = buildFixtures(["merge-domain-a.yaml", "merge-domain-b.yaml"], true);
  t.strictSame([...rules.domains.keys()], ["test-domain"]);
  t.strictSame([...(rules.domains.get("test-domain")?.exact.keys() ?? [])].sort(), [
    "key1_value1",
    "key2_value2",
  ]);
  const first = nodeAt(rules, "test-domain", ["key1_value1"])?.limit;
  const second = nodeAt(rules, "test-domain", ["key2_value2"])?.limit;
  t.equal(first?.requestsPerUnit, 10);
  t.equal(first?.unit, 2);
  t.equal(second?.requestsPerUnit, 20);
  t.equal(second?.unit, 3);
  t.equal(second?.fullKey, "test-domain.key2_value2");
});

t.test("several files with different domains load side by side", async (t) => {
  const rules = buildFixtures(["dump.yaml", "dump-second-domain.yaml"]);
  t.strictSame([...rules.domains.keys()].sort(), ["bar", "foo"]);
});
