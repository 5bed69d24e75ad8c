/**
 * Descriptor matching (the reference's src/config/config_impl.go, GetLimit): precedence at each level,
 * request depth vs config depth, whitelist entries, unknown keys and empty values. Each rule's
 * `requests_per_unit` identifies it.
 */
import t from "tap";
import { type Rules, rulesFrom } from "./matching-fixtures.js";

const limitOf = (rules: Rules, ...pairs: string[]) => rules.match(...pairs)?.rule.requestsPerUnit;

// Exact key_value beats a wildcard, which beats the value-less key.
t.test("exact key_value beats wildcard beats key-only", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: k
    rate_limit: { unit: second, requests_per_unit: 3 }
  - key: k
    value: "v*"
    rate_limit: { unit: second, requests_per_unit: 2 }
  - key: k
    value: v1
    rate_limit: { unit: second, requests_per_unit: 1 }
`);
  t.equal(limitOf(rules, "k=v1"), 1, "exact value");
  t.equal(limitOf(rules, "k=v2"), 2, "wildcard when no exact value");
  t.equal(limitOf(rules, "k=x"), 3, "key-only when neither matches");
  t.equal(limitOf(rules, "k=v*"), 2, "a literal value equal to the pattern is an exact match");
  t.equal(rules.match("k=v1")?.rule.fullKey, "d.k_v1");
  t.equal(rules.match("k=x")?.rule.fullKey, "d.k");
});

// The request's depth must equal the config's depth.
t.test("request depth must equal config depth", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: a
    value: "1"
    descriptors:
      - key: b
        rate_limit: { unit: minute, requests_per_unit: 7 }
`);
  t.equal(limitOf(rules, "a=1", "b=x"), 7, "same depth matches");
  t.equal(limitOf(rules, "a=1"), undefined, "shorter request: the parent has no rate_limit");
  t.equal(limitOf(rules, "a=1", "b=x", "c=y"), undefined, "longer request: the leaf has no children");
  t.equal(limitOf(rules, "b=x"), undefined, "the child alone is not a top-level entry");
  t.equal(limitOf(rules, "a=2", "b=x"), undefined, "parent value must match");
});

// A node's rate_limit applies only when it matches the last entry; its children otherwise.
t.test("a node with a rate_limit and children", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: a
    rate_limit: { unit: second, requests_per_unit: 5 }
    descriptors:
      - key: b
        rate_limit: { unit: second, requests_per_unit: 10 }
`);
  t.equal(limitOf(rules, "a=x"), 5, "the parent's own limit at the last entry");
  t.equal(limitOf(rules, "a=x", "b=y"), 10, "the child's limit one level deeper");
  t.equal(limitOf(rules, "a=x", "c=y"), undefined, "the parent's limit is not used for a deeper request");
  t.equal(limitOf(rules, "a=x", "b=y", "c=z"), undefined, "deeper than the config");
});

// A descriptor without rate_limit and without children is a whitelist entry (matches, no limit).
t.test("whitelist node gives no limit and shadows the key-only fallback", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: client
    value: trusted
  - key: client
    rate_limit: { unit: second, requests_per_unit: 4 }
  - key: open
`);
  t.equal(limitOf(rules, "client=trusted"), undefined, "whitelisted value");
  t.equal(limitOf(rules, "client=other"), 4, "other values fall back to the key");
  t.equal(limitOf(rules, "open=x"), undefined, "value-less whitelist");
});

// Nothing matches → no result.
t.test("unknown keys give undefined", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: known
    value: v
    rate_limit: { unit: second, requests_per_unit: 1 }
`);
  t.equal(limitOf(rules, "unknown=v"), undefined);
  t.equal(limitOf(rules, "known=other"), undefined, "known key, unconfigured value, no key-only entry");
  t.equal(limitOf(rules, "Known=v"), undefined, "keys are case-sensitive");
  t.equal(rules.ruleSet.domains.get("other-domain"), undefined, "unknown domain has no root level");
});

// An empty value looks up `key_`, which never equals a value-less config key.
t.test("empty values: the key_ quirk", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: k
    rate_limit: { unit: second, requests_per_unit: 1 }
  - key: e
    value: v
    rate_limit: { unit: second, requests_per_unit: 2 }
  - key: q_
    rate_limit: { unit: second, requests_per_unit: 3 }
`);
  t.equal(limitOf(rules, "k="), 1, "empty value falls through to the value-less key");
  t.equal(limitOf(rules, "e="), undefined, "empty value does not match a configured value");
  t.equal(limitOf(rules, "q="), 3, "empty value's lookup text `q_` equals the config key `q_`");
  t.equal(rules.match("q=")?.rule.fullKey, "d.q_");
});

// The most specific match wins at every level, independently.
t.test("precedence applies per level on a nested path", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: route
    descriptors:
      - key: method
        value: GET
        rate_limit: { unit: second, requests_per_unit: 11 }
      - key: method
        rate_limit: { unit: second, requests_per_unit: 12 }
  - key: route
    value: admin
    descriptors:
      - key: method
        rate_limit: { unit: second, requests_per_unit: 21 }
`);
  t.equal(limitOf(rules, "route=api", "method=GET"), 11);
  t.equal(limitOf(rules, "route=api", "method=POST"), 12);
  t.equal(limitOf(rules, "route=admin", "method=GET"), 21, "exact route's subtree, never the key-only one");
  t.equal(rules.match("route=admin", "method=GET")?.rule.fullKey, "d.route_admin.method");
});

// If the matched node has a rate_limit, it becomes the result (a copy).
t.test("the matched rule carries the configured limit", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: k
    rate_limit: { unit: HOUR, requests_per_unit: 42, name: hourly }
`);
  const matched = rules.match("k=v");
  t.equal(matched?.rule.unit, 3, "HOUR is unit 3");
  t.equal(matched?.rule.name, "hourly");
  t.equal(matched?.sharePatterns, undefined, "no share_threshold, no patterns");
});
