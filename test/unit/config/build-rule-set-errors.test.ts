// The reference's configuration errors (src/config/config_impl.go) raised while building the rule set
// (reference `loadConfig` / `loadDescriptors`): domains, descriptor keys, units, replaces, share_threshold.
// Each fixture is named after the scenario it breaks; each message is asserted in full, file prefix included.
import t, { type Test } from "tap";
import { buildFixtures, configErrorMessage } from "./config-fixtures.js";

function expectError(
  t: Test,
  fixtures: readonly string[],
  expected: string,
  mergeDomainConfig = false,
): void {
  t.equal(
    configErrorMessage(() => buildFixtures(fixtures, mergeDomainConfig)),
    expected,
    fixtures.join(" + "),
  );
}

t.test("missing domain", async (t) => {
  expectError(t, ["empty-domain.yaml"], "empty-domain.yaml: config file cannot have empty domain");
  // An empty file is an empty document: it parses, then has no domain.
  expectError(t, ["empty.yaml"], "empty.yaml: config file cannot have empty domain");
});

t.test("same domain twice without MERGE_DOMAIN_CONFIG is reported against the second file", async (t) => {
  expectError(
    t,
    ["duplicate-domain-a.yaml", "duplicate-domain-b.yaml"],
    "duplicate-domain-b.yaml: duplicate domain 'test-domain' in config file",
  );
  expectError(
    t,
    ["duplicate-domain-b.yaml", "duplicate-domain-a.yaml"],
    "duplicate-domain-a.yaml: duplicate domain 'test-domain' in config file",
  );
});

t.test("descriptor without key", async (t) => {
  expectError(t, ["empty-descriptor-key.yaml"], "empty-descriptor-key.yaml: descriptor has empty key");
});

t.test("siblings with the same key and value", async (t) => {
  expectError(
    t,
    ["duplicate-composite-key.yaml"],
    "duplicate-composite-key.yaml: duplicate descriptor composite key 'test-domain.key1_value1'",
  );
  // The full path names the parent; a value-less key appears without `_`.
  expectError(
    t,
    ["duplicate-nested-composite-key.yaml"],
    "duplicate-nested-composite-key.yaml: duplicate descriptor composite key 'test-domain.key1_value1.subkey1'",
  );
});

t.test("MERGE_DOMAIN_CONFIG: a top-level conflict across files is a duplicate composite key", async (t) => {
  expectError(
    t,
    ["merge-domain-a.yaml", "merge-domain-conflict.yaml"],
    "merge-domain-conflict.yaml: duplicate descriptor composite key 'test-domain.key1_value1'",
    true,
  );
});

t.test("unlimited together with a valid unit", async (t) => {
  expectError(
    t,
    ["unlimited-with-unit.yaml"],
    "unlimited-with-unit.yaml: should not specify rate limit unit when unlimited",
  );
});

t.test("invalid, missing and UNKNOWN units", async (t) => {
  expectError(t, ["invalid-unit.yaml"], "invalid-unit.yaml: invalid rate limit unit 'foo'");
  expectError(t, ["missing-unit.yaml"], "missing-unit.yaml: invalid rate limit unit ''");
  // UNKNOWN is in the proto enum but is not a valid unit; the text is quoted as written.
  expectError(t, ["unknown-unit.yaml"], "unknown-unit.yaml: invalid rate limit unit 'unknown'");
});

t.test("replaces", async (t) => {
  expectError(t, ["empty-replaces.yaml"], "empty-replaces.yaml: should not have an empty replaces entry");
  expectError(
    t,
    ["replaces-self.yaml"],
    "replaces-self.yaml: replaces should not contain name of same descriptor",
  );
});

t.test("share_threshold on a key/value without '*'", async (t) => {
  expectError(
    t,
    ["share-threshold-without-wildcard.yaml"],
    "share-threshold-without-wildcard.yaml: share_threshold can only be used with wildcard values (containing '*'), but found key 'files_top'",
  );
});

t.test("a valid file loaded before a broken one does not hide the error", async (t) => {
  expectError(
    t,
    ["dump-second-domain.yaml", "invalid-unit.yaml"],
    "invalid-unit.yaml: invalid rate limit unit 'foo'",
  );
});
