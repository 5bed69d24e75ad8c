/**
 * Wildcard descriptor values (the reference's src/config/config_impl.go, GetLimit): the pattern is the
 * config's `key_value`, each `*` matches zero or more characters, and the first match in config order wins.
 */
import t from "tap";
import { compileWildcard, wildcardMatches } from "../../../src/engine/wildcard.js";
import { type Rules, rulesFrom } from "./matching-fixtures.js";

const limitOf = (rules: Rules, ...pairs: string[]) => rules.match(...pairs)?.rule.requestsPerUnit;

/** [pattern, text, expected] over the raw `key_value` texts. */
const table: [string, string, boolean][] = [
  // trailing
  ["k_foo*", "k_foo", true],
  ["k_foo*", "k_foobar", true],
  ["k_foo*", "k_fo", false],
  ["k_foo*", "k_xfoo", false],
  // middle
  ["k_bar*b", "k_barb", true],
  ["k_bar*b", "k_barxyzb", true],
  ["k_bar*b", "k_barbx", false],
  ["k_bar*b", "k_bar", false],
  // prefix and suffix may not overlap: fixed length 7 > 5
  ["k_bab*bab", "k_bab", false],
  ["k_bab*bab", "k_babab", false],
  ["k_bab*bab", "k_babbab", true],
  // multiple
  ["k_foo*bar*baz", "k_foobarbaz", true],
  ["k_foo*bar*baz", "k_foo1bar2baz", true],
  ["k_foo*bar*baz", "k_foobazbar", false],
  ["k_foo*bar*baz", "k_foo1baz", false],
  ["k_foo*bar*baz", "k_foobarbaz!", false],
  ["k_foo*bar*baz", "k_foo-qux-baz", false],
  // a middle segment must fit between prefix and suffix
  ["k_a*bc*c", "k_abc", false],
  ["k_a*bc*c", "k_abcc", true],
  ["k_a*bc*c", "k_abxc", false],
  ["k_a*bc*c", "k_axbc", false],
  // leading and consecutive stars
  ["k_*x", "k_x", true],
  ["k_**", "k_", true],
];

// Prefix = first segment, suffix = last, middles in order, each `*` zero or more chars.
t.test("wildcardMatches table", async (t) => {
  for (const [pattern, text, expected] of table) {
    t.equal(wildcardMatches(compileWildcard(pattern), text), expected, `${pattern} vs ${text}`);
  }
});

// Trailing, middle and multiple wildcards through the matcher.
t.test("trailing, middle and multiple wildcards match request values", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: t
    value: "foo*"
    rate_limit: { unit: second, requests_per_unit: 1 }
  - key: m
    value: "bar*b"
    rate_limit: { unit: second, requests_per_unit: 2 }
  - key: x
    value: "foo*bar*baz"
    rate_limit: { unit: second, requests_per_unit: 3 }
`);
  t.equal(limitOf(rules, "t=foo1"), 1);
  t.equal(limitOf(rules, "t=fo"), undefined);
  t.equal(limitOf(rules, "m=barxb"), 2);
  t.equal(limitOf(rules, "m=barbx"), undefined, "suffix must end the value");
  t.equal(limitOf(rules, "x=foo-bar-baz"), 3);
  t.equal(limitOf(rules, "x=foo-baz-bar"), undefined, "segments must appear in order");
  t.equal(limitOf(rules, "x=foo-qux-baz"), undefined, "every middle segment must appear");
  t.equal(rules.match("m=barxb")?.rule.fullKey, "d.m_bar*b", "the config path is the pattern");
});

// Each `*` matches zero or more characters.
t.test("* matches zero characters", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: t
    value: "foo*"
    rate_limit: { unit: second, requests_per_unit: 1 }
  - key: m
    value: "bar*b"
    rate_limit: { unit: second, requests_per_unit: 2 }
  - key: x
    value: "foo*bar*baz"
    rate_limit: { unit: second, requests_per_unit: 3 }
`);
  t.equal(limitOf(rules, "t=foo"), 1);
  t.equal(limitOf(rules, "m=barb"), 2);
  t.equal(limitOf(rules, "x=foobarbaz"), 3);
});

// Wildcards are tried in config order, first match wins.
t.test("first matching wildcard in config order wins", async (t) => {
  const specificFirst = rulesFrom(`
domain: d
descriptors:
  - key: k
    value: "ab*"
    rate_limit: { unit: second, requests_per_unit: 1 }
  - key: k
    value: "a*"
    rate_limit: { unit: second, requests_per_unit: 2 }
`);
  t.equal(limitOf(specificFirst, "k=abc"), 1);
  t.equal(limitOf(specificFirst, "k=axe"), 2);

  const generalFirst = rulesFrom(`
domain: d
descriptors:
  - key: k
    value: "a*"
    rate_limit: { unit: second, requests_per_unit: 2 }
  - key: k
    value: "ab*"
    rate_limit: { unit: second, requests_per_unit: 1 }
`);
  t.equal(limitOf(generalFirst, "k=abc"), 2, "not the longest pattern: the first one");
});

// Because the key is part of the pattern, `key: a, value: "b*"` also matches a key `a_b` (a quirk of the
// reference, kept).
t.test("quirk: the key text participates in the pattern", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: a
    value: "b*"
    rate_limit: { unit: second, requests_per_unit: 9 }
`);
  t.equal(limitOf(rules, "a=bee"), 9, "the intended match");
  t.equal(limitOf(rules, "a_b=x"), 9, "key a_b, value x: `a_b_x` starts with `a_b`");
  t.equal(rules.match("a_b=x")?.rule.fullKey, "d.a_b*");
  t.equal(limitOf(rules, "a=x"), undefined);
});

// Wildcards apply at every level; value-less keys still match below a wildcard.
t.test("wildcards at nested levels", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: tenant
    value: "t*prod"
    descriptors:
      - key: resource
        value: "res*v2"
        rate_limit: { unit: minute, requests_per_unit: 60 }
      - key: resource
        rate_limit: { unit: minute, requests_per_unit: 30 }
`);
  t.equal(limitOf(rules, "tenant=t1prod", "resource=res-a-v2"), 60);
  t.equal(limitOf(rules, "tenant=t1prod", "resource=other"), 30, "key-only fallback under a wildcard");
  t.equal(limitOf(rules, "tenant=t1dev", "resource=res-a-v2"), undefined, "parent wildcard must match");
  t.equal(limitOf(rules, "tenant=t1prod"), undefined, "wildcard parent has no limit of its own");
  t.equal(rules.match("tenant=t1prod", "resource=resv2")?.rule.fullKey, "d.tenant_t*prod.resource_res*v2");
});
