/**
 * Stats key selection (the reference's src/config/config_impl.go, GetLimit): config path by default, request
 * values for detailed_metric, per-level runtime values for value_to_metric, wildcard patterns for
 * share_threshold, and the override key.
 */
import t from "tap";
import { overrideStatsKey } from "../../../src/engine/rule-matcher.js";
import { engineFor, entriesOf, type Rules, rulesFrom } from "./matching-fixtures.js";

const statsKeyOf = (rules: Rules, ...pairs: string[]) => rules.match(...pairs)?.stats.key;

// By default the config path, value omitted for value-less entries, patterns for wildcards.
t.test("default stats key is the config path", async (t) => {
  const rules = rulesFrom(`
domain: test-domain
descriptors:
  - key: key1
    value: value1
    descriptors:
      - key: subkey1
        rate_limit: { unit: second, requests_per_unit: 5 }
  - key: wild
    value: "foo*"
    rate_limit: { unit: second, requests_per_unit: 1 }
`);
  t.equal(statsKeyOf(rules, "key1=value1", "subkey1=something"), "test-domain.key1_value1.subkey1");
  t.equal(statsKeyOf(rules, "wild=foo1"), "test-domain.wild_foo*");
  t.equal(statsKeyOf(rules, "wild=foo2"), "test-domain.wild_foo*", "every value shares the stats key");
  t.equal(rules.match("wild=foo1")?.stats, rules.match("wild=foo1")?.rule.stats, "the rule's own stats");
});

// value_to_metric: runtime values for value-less levels that ask; explicit values always show.
t.test("value_to_metric: domain.route_draw.http_method_GET.subject_id", async (t) => {
  const allLevels = rulesFrom(`
domain: domain
descriptors:
  - key: route
    value_to_metric: true
    descriptors:
      - key: http_method
        value_to_metric: true
        descriptors:
          - key: subject_id
            rate_limit: { unit: minute, requests_per_unit: 60 }
`);
  t.equal(
    statsKeyOf(allLevels, "route=draw", "http_method=GET", "subject_id=123"),
    "domain.route_draw.http_method_GET.subject_id",
  );
  t.equal(
    statsKeyOf(allLevels, "route=api", "http_method=POST", "subject_id=456"),
    "domain.route_api.http_method_POST.subject_id",
  );
  t.equal(
    statsKeyOf(allLevels, "route=api", "http_method=", "subject_id=1"),
    "domain.route_api.http_method.subject_id",
    "empty runtime value → just the key",
  );

  const explicitRoute = rulesFrom(`
domain: domain
descriptors:
  - key: route
    value: draw
    descriptors:
      - key: http_method
        value_to_metric: true
        descriptors:
          - key: subject_id
            rate_limit: { unit: minute, requests_per_unit: 60 }
`);
  t.equal(
    statsKeyOf(explicitRoute, "route=draw", "http_method=GET", "subject_id=123"),
    "domain.route_draw.http_method_GET.subject_id",
    "an explicitly configured value shows without value_to_metric",
  );
});

// value_to_metric on a middle level only.
t.test("value_to_metric on a middle level: d.k1.k2_Y.k3", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: k1
    descriptors:
      - key: k2
        value_to_metric: true
        descriptors:
          - key: k3
            rate_limit: { unit: second, requests_per_unit: 1 }
`);
  t.equal(statsKeyOf(rules, "k1=X", "k2=Y", "k3=Z"), "d.k1.k2_Y.k3");
  t.equal(rules.match("k1=X", "k2=Y", "k3=Z")?.rule.fullKey, "d.k1.k2.k3", "the config path is unchanged");
});

// Wildcard + value_to_metric writes the full runtime value.
t.test("wildcard with value_to_metric: test-domain.wild_foo1", async (t) => {
  const rules = rulesFrom(`
domain: test-domain
descriptors:
  - key: wild
    value: "foo*"
    value_to_metric: true
    rate_limit: { unit: second, requests_per_unit: 1 }
`);
  t.equal(statsKeyOf(rules, "wild=foo1"), "test-domain.wild_foo1");
  t.equal(statsKeyOf(rules, "wild=foo"), "test-domain.wild_foo", "* matched nothing");
});

// share_threshold writes the pattern even with value_to_metric (as the reference's code and tests do, unlike
// its README's example 11).
t.test("share_threshold + value_to_metric: test-domain.route_api/*.method", async (t) => {
  const rules = rulesFrom(`
domain: test-domain
descriptors:
  - key: route
    value: "api/*"
    share_threshold: true
    value_to_metric: true
    descriptors:
      - key: method
        rate_limit: { unit: minute, requests_per_unit: 60 }
`);
  t.equal(statsKeyOf(rules, "route=api/v1", "method=GET"), "test-domain.route_api/*.method");
  t.equal(statsKeyOf(rules, "route=api/v2", "method=POST"), "test-domain.route_api/*.method");
});

// A share_threshold level keeps its pattern, a non-sharing wildcard level too.
t.test("nested wildcards: test-domain.path_path/*.file_file/*.type", async (t) => {
  const rules = rulesFrom(`
domain: test-domain
descriptors:
  - key: path
    value: "path/*"
    share_threshold: true
    descriptors:
      - key: file
        value: "file/*"
        share_threshold: false
        descriptors:
          - key: type
            rate_limit: { unit: minute, requests_per_unit: 120 }
`);
  t.equal(
    statsKeyOf(rules, "path=path/a", "file=file/b.txt", "type=jpg"),
    "test-domain.path_path/*.file_file/*.type",
  );
});

// detailed_metric: every entry `key_value` from the request, `key_` for empty values.
t.test("detailed_metric uses request values", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: k1
    descriptors:
      - key: k2
        detailed_metric: true
        rate_limit: { unit: second, requests_per_unit: 1 }
  - key: w
    value: "p*"
    detailed_metric: true
    rate_limit: { unit: second, requests_per_unit: 2 }
`);
  t.equal(statsKeyOf(rules, "k1=a", "k2=b"), "d.k1_a.k2_b");
  t.equal(statsKeyOf(rules, "k1=a", "k2="), "d.k1_a.k2_", "empty value → key_");
  t.equal(statsKeyOf(rules, "k1=", "k2="), "d.k1_.k2_");
  t.equal(statsKeyOf(rules, "w=pq"), "d.w_pq", "the runtime value, not the pattern");
  t.equal(rules.match("k1=a", "k2=b")?.rule.fullKey, "d.k1.k2", "the rule itself keeps its config path");
});

// detailed_metric takes precedence over value_to_metric (empty value: `key_`, not `key`).
t.test("detailed_metric wins over value_to_metric", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: a
    value_to_metric: true
    descriptors:
      - key: b
        detailed_metric: true
        rate_limit: { unit: second, requests_per_unit: 1 }
`);
  t.equal(statsKeyOf(rules, "a=", "b=x"), "d.a_.b_x");
});

// detailed_metric + share_threshold → the pattern for sharing entries, values elsewhere.
t.test("detailed_metric + share_threshold: test-domain.service_svc/*.endpoint_get", async (t) => {
  const rules = rulesFrom(`
domain: test-domain
descriptors:
  - key: service
    value: "svc/*"
    share_threshold: true
    descriptors:
      - key: endpoint
        detailed_metric: true
        rate_limit: { unit: minute, requests_per_unit: 80 }
`);
  t.equal(statsKeyOf(rules, "service=svc/a", "endpoint=get"), "test-domain.service_svc/*.endpoint_get");
  t.equal(statsKeyOf(rules, "service=svc/b", "endpoint=get"), "test-domain.service_svc/*.endpoint_get");
  t.equal(statsKeyOf(rules, "service=svc/a", "endpoint=put"), "test-domain.service_svc/*.endpoint_put");
});

// Override stats key `domain.k1_v1.k2`, value omitted when empty.
t.test("override stats key", async (t) => {
  t.equal(overrideStatsKey("domain", entriesOf("k1=v1", "k2=")), "domain.k1_v1.k2");
  t.equal(overrideStatsKey("domain", entriesOf("remote_address=10.0.0.1")), "domain.remote_address_10.0.0.1");

  const rules = rulesFrom(`
domain: domain
descriptors:
  - key: k1
    value: v1
    rate_limit: { unit: second, requests_per_unit: 5 }
`);
  const engine = engineFor(rules);
  const plan = engine.plan(
    rules.ruleSet,
    {
      domain: "domain",
      descriptors: [
        { entries: entriesOf("k1=v1"), limit: { requestsPerUnit: 9, unit: 2 } },
        { entries: entriesOf("nomatch=x", "k2="), limit: { requestsPerUnit: 3, unit: 1 } },
      ],
      hitsAddend: 1,
    },
    1234,
  );
  t.equal(plan.active[0]?.stats.key, "domain.k1_v1", "override wins over the matching rule");
  t.equal(plan.active[0]?.rule.requestsPerUnit, 9);
  t.equal(plan.active[1]?.stats.key, "domain.nomatch_x.k2", "applies even when no rule matches");
});
