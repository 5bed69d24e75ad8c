// `/rlconfig`: one line per descriptor that has a rate_limit, parents before their children,
// `<fullKey>: unit=<UNIT> requests_per_unit=<n>, shadow_mode: <b>, quota_mode: <b>`; unlimited rules without
// a unit show `unit=UNKNOWN`, as in the reference's xDS provider tests. The reference's order is Go map
// order; ratelimitd prints configuration order, so exact text is asserted here.
import t from "tap";
import { dumpRuleSet } from "../../../src/config/dump-rule-set.js";
import { parseRuleYaml } from "../../../src/config/yaml/parse-rule-yaml.js";
import { buildFixtures, compileRules } from "./config-fixtures.js";

t.test("multi-level config: parents before children, descriptors without rate_limit skipped", async (t) => {
  t.equal(
    dumpRuleSet(buildFixtures(["dump.yaml"])),
    "foo.k1_v1: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false\n" +
      "foo.k1_v1.k2: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false\n" +
      "foo.j1_v2.j2_v2: unit=DAY requests_per_unit=15, shadow_mode: true, quota_mode: true\n" +
      "foo.j1_v2.j3: unit=WEEK requests_per_unit=7, shadow_mode: false, quota_mode: false\n" +
      "foo.j1_v2.j3.j4_*: unit=SECOND requests_per_unit=1, shadow_mode: false, quota_mode: true\n",
  );
});

t.test("the reference's example dump lines appear verbatim", async (t) => {
  // These lines are quoted from the reference's test/provider/xds_grpc_sotw_provider_test.go.
  const lines = dumpRuleSet(buildFixtures(["dump.yaml"])).split("\n");
  t.ok(
    lines.includes("foo.k1_v1: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false"),
    "foo.k1_v1: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false",
  );
  t.ok(
    lines.includes("foo.k1_v1.k2: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false"),
    "foo.k1_v1.k2: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false",
  );
  t.ok(
    lines.includes("foo.j1_v2.j2_v2: unit=DAY requests_per_unit=15, shadow_mode: true, quota_mode: true"),
    "foo.j1_v2.j2_v2: unit=DAY requests_per_unit=15, shadow_mode: true, quota_mode: true",
  );
});

t.test("unlimited with requests_per_unit keeps the configured number", async (t) => {
  t.equal(
    dumpRuleSet(buildFixtures(["unlimited-with-requests-per-unit.yaml"])),
    "test-domain.key1: unit=UNKNOWN requests_per_unit=10, shadow_mode: false, quota_mode: false\n",
  );
});

t.test("several domains, each in configuration order", async (t) => {
  const text = dumpRuleSet(buildFixtures(["dump-second-domain.yaml", "all-units.yaml"]));
  t.equal(
    text,
    "bar.limited: unit=YEAR requests_per_unit=1000, shadow_mode: false, quota_mode: false\n" +
      "test-domain.second: unit=SECOND requests_per_unit=1, shadow_mode: false, quota_mode: false\n" +
      "test-domain.minute: unit=MINUTE requests_per_unit=2, shadow_mode: false, quota_mode: false\n" +
      "test-domain.hour: unit=HOUR requests_per_unit=3, shadow_mode: false, quota_mode: false\n" +
      "test-domain.day: unit=DAY requests_per_unit=4, shadow_mode: false, quota_mode: false\n" +
      "test-domain.week: unit=WEEK requests_per_unit=5, shadow_mode: false, quota_mode: false\n" +
      "test-domain.month: unit=MONTH requests_per_unit=6, shadow_mode: false, quota_mode: false\n" +
      "test-domain.year: unit=YEAR requests_per_unit=7, shadow_mode: false, quota_mode: false\n",
  );
});

t.test("merged domains list the later file's descriptors after the earlier ones", async (t) => {
  t.equal(
    dumpRuleSet(buildFixtures(["merge-domain-a.yaml", "merge-domain-b.yaml"], true)),
    "test-domain.key1_value1: unit=MINUTE requests_per_unit=10, shadow_mode: false, quota_mode: false\n" +
      "test-domain.key2_value2: unit=HOUR requests_per_unit=20, shadow_mode: false, quota_mode: false\n",
  );
});

t.test("empty body when nothing is loaded or nothing has a rate_limit", async (t) => {
  t.equal(dumpRuleSet(undefined), "");
  t.equal(dumpRuleSet(compileRules([])), "");
  t.equal(dumpRuleSet(buildFixtures(["whitelist-descriptor.yaml"])), "");
});

t.test("rules using the extensions show them; a rate_limits list prints one line per limit", async (t) => {
  const yaml =
    "domain: api\ndescriptors:\n" +
    "  - key: plan\n    value: plain\n    rate_limit: { unit: minute, requests_per_unit: 3 }\n" +
    "  - key: plan\n    value: bucket\n    shadow_mode: true\n" +
    "    rate_limit: { unit: minute, requests_per_unit: 100, algorithm: token_bucket, burst: 20, unit_multiplier: 5 }\n" +
    "  - key: plan\n    value: sliding\n    rate_limit: { unit: hour, requests_per_unit: 50, algorithm: sliding_window }\n" +
    "  - key: user\n    rate_limits:\n" +
    "      - { name: burst, unit: second, requests_per_unit: 20, algorithm: token_bucket, burst: 40 }\n" +
    "      - { name: sustained, unit: hour, requests_per_unit: 1000 }\n" +
    "  - key: single\n    rate_limits:\n      - { unit: day, requests_per_unit: 9 }\n";
  t.equal(
    dumpRuleSet(compileRules([parseRuleYaml("api.yaml", yaml)])),
    "api.plan_plain: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false\n" +
      "api.plan_bucket: unit=MINUTE requests_per_unit=100, shadow_mode: true, quota_mode: false, " +
      "algorithm=token_bucket, burst=20, unit_multiplier=5\n" +
      "api.plan_sliding: unit=HOUR requests_per_unit=50, shadow_mode: false, quota_mode: false, " +
      "algorithm=sliding_window, unit_multiplier=1\n" +
      "api.user rate_limits[0]: unit=SECOND requests_per_unit=20, shadow_mode: false, quota_mode: false, " +
      "algorithm=token_bucket, burst=40, unit_multiplier=1\n" +
      "api.user rate_limits[1]: unit=HOUR requests_per_unit=1000, shadow_mode: false, quota_mode: false, " +
      "algorithm=fixed_window, unit_multiplier=1\n" +
      "api.single: unit=DAY requests_per_unit=9, shadow_mode: false, quota_mode: false, " +
      "algorithm=fixed_window, unit_multiplier=1\n",
  );
});
