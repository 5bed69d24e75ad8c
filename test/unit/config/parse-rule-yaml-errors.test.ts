// The reference's configuration errors (src/config/config_impl.go) raised while reading a file: YAML syntax
// and typed-pass errors (`error loading config file: <yaml.v2 error>`), the key whitelist pass and
// unsupported value types. Each fixture is named after the scenario it breaks; each message is asserted in
// full, file prefix included.
import t, { type Test } from "tap";
import { ConfigError } from "../../../src/errors.js";
import { configErrorMessage, parseFixture } from "./config-fixtures.js";

function expectError(t: Test, fixture: string, reason: string): void {
  t.equal(
    configErrorMessage(() => parseFixture(fixture)),
    `${fixture}: ${reason}`,
    fixture,
  );
}

t.test("ConfigError carries the file name and the reason separately", async (t) => {
  try {
    parseFixture("unknown-key.yaml");
    t.fail("expected a ConfigError");
  } catch (error) {
    t.type(error, ConfigError);
    const configError = error as ConfigError;
    t.equal(configError.source, "unknown-key.yaml");
    t.equal(configError.reason, "config error, unknown key 'ratelimit'");
    t.equal(configError.code, "config_invalid");
  }
});

t.test("YAML syntax error: yaml.v2's shape and line, js-yaml's reason", async (t) => {
  // An unterminated quoted scalar. yaml.v2 reports "yaml: line 2: found unexpected end of stream"; libyaml's
  // wording cannot be reproduced by a JavaScript parser, so ratelimitd keeps the shape and the line and
  // gives js-yaml's reason (a documented difference, docs/compatibility.md).
  t.equal(
    configErrorMessage(() => parseFixture("yaml-syntax-error.yaml")),
    "yaml-syntax-error.yaml: error loading config file: yaml: line 2: deficient indentation",
  );
});

t.test("a document that is not a map fails the untyped pass", async (t) => {
  // yaml.v2 `terror`: scalars show their text in backquotes, sequences and maps do not.
  expectError(
    t,
    "scalar-document.yaml",
    "error loading config file: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `hello` into map[interface {}]interface {}",
  );
  expectError(
    t,
    "list-document.yaml",
    "error loading config file: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into map[interface {}]interface {}",
  );
});

t.test("non-string mapping key", async (t) => {
  expectError(t, "non-string-key.yaml", "config error, key is not of type string: 0.25");
});

t.test("unknown key at the descriptor level and inside rate_limit", async (t) => {
  expectError(t, "unknown-key.yaml", "config error, unknown key 'ratelimit'");
  expectError(t, "unknown-nested-key.yaml", "config error, unknown key 'requestsperunit'");
});

t.test("list elements that are not maps", async (t) => {
  expectError(t, "list-of-strings.yaml", "config error, yaml file contains list of type other than map: a");
  // Go's %v of a []interface{}.
  expectError(t, "list-of-lists.yaml", "config error, yaml file contains list of type other than map: [a b]");
});

t.test("values of unsupported YAML types", async (t) => {
  expectError(t, "float-value.yaml", "error checking config");
  // Above int64, yaml.v2 resolves an integer to uint64, which the key pass does not accept either.
  expectError(t, "huge-integer-value.yaml", "error checking config");
});

t.test("typed pass: requests_per_unit outside uint32", async (t) => {
  expectError(
    t,
    "negative-requests-per-unit.yaml",
    "error loading config file: yaml: unmarshal errors:\n  line 5: cannot unmarshal !!int `-1` into uint32",
  );
  expectError(
    t,
    "overflow-requests-per-unit.yaml",
    "error loading config file: yaml: unmarshal errors:\n  line 5: cannot unmarshal !!int `4294967296` into uint32",
  );
  // yaml.v2 shortens a value longer than 10 characters to its first 7 and `...`.
  expectError(
    t,
    "long-overflow-requests-per-unit.yaml",
    "error loading config file: yaml: unmarshal errors:\n  line 5: cannot unmarshal !!int `1000000...` into uint32",
  );
});

t.test("typed pass: a string where a bool belongs", async (t) => {
  expectError(
    t,
    "string-for-bool.yaml",
    "error loading config file: yaml: unmarshal errors:\n  line 4: cannot unmarshal !!str `maybe` into bool",
  );
});

t.test("typed pass: every mismatch is reported, in document order", async (t) => {
  expectError(
    t,
    "several-unmarshal-errors.yaml",
    "error loading config file: yaml: unmarshal errors:\n" +
      "  line 5: cannot unmarshal !!int `-1` into uint32\n" +
      "  line 8: cannot unmarshal !!str `sometimes` into bool",
  );
});

t.test("metadata a protobuf Struct cannot hold: its own message, not a yaml.v2 error", async (t) => {
  // yaml.v2 decodes `!!binary` into a Go string of the bytes; structpb.NewValue refuses invalid UTF-8.
  expectError(
    t,
    "metadata-binary-not-utf8.yaml",
    'error parsing metadata: proto: invalid UTF-8 in string: "ok\\xff\\n"',
  );
  // The typed pass (yaml.Unmarshal) fails first, before any metadata is converted.
  expectError(
    t,
    "metadata-not-utf8-after-mismatch.yaml",
    "error loading config file: yaml: unmarshal errors:\n  line 6: cannot unmarshal !!int `-1` into uint32",
  );
});

t.test("the key pass runs before the typed pass", async (t) => {
  // `requests_per_unit: -1` would fail the typed pass; the unknown key is found first. (`burst`, the
  // reference's unknown key here once, is a key of ratelimitd's token bucket now.)
  expectError(t, "unknown-key-before-typed-pass.yaml", "config error, unknown key 'leak_rate'");
});
