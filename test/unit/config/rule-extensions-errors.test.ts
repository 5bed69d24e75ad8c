// The refusals of ratelimitd's rule extensions (docs/algorithms.md): `algorithm`, `burst`,
// `unit_multiplier` and `rate_limits`. Each rule file is named after the scenario it breaks; each message is
// asserted in full, file prefix included, and names the rule by its full key.
import t, { type Test } from "tap";
import { parseRuleYaml } from "../../../src/config/yaml/parse-rule-yaml.js";
import { compileRules, configErrorMessage } from "./config-fixtures.js";

/** A rule file of domain `api` with one descriptor `path: /upload` whose body is `descriptor`. */
function ruleFile(descriptor: string): string {
  return `domain: api\ndescriptors:\n  - key: path\n    value: /upload\n${descriptor}`;
}

function expectError(t: Test, name: string, yaml: string, reason: string): void {
  t.equal(
    configErrorMessage(() => compileRules([parseRuleYaml(name, yaml)])),
    `${name}: ${reason}`,
    name,
  );
}

t.test("an unknown algorithm lists the valid ones", async (t) => {
  expectError(
    t,
    "unknown-algorithm.yaml",
    ruleFile("    rate_limit: { unit: minute, requests_per_unit: 10, algorithm: leaky_bucket }\n"),
    "rate_limit of 'api.path_/upload': unknown algorithm 'leaky_bucket', valid: fixed_window, sliding_window, token_bucket",
  );
  expectError(
    t,
    "empty-algorithm.yaml",
    ruleFile("    rate_limit: { unit: minute, requests_per_unit: 10, algorithm: '' }\n"),
    "rate_limit of 'api.path_/upload': unknown algorithm '', valid: fixed_window, sliding_window, token_bucket",
  );
});

t.test("burst belongs to the token bucket only", async (t) => {
  expectError(
    t,
    "burst-on-sliding-window.yaml",
    ruleFile(
      "    rate_limit: { unit: minute, requests_per_unit: 10, algorithm: sliding_window, burst: 20 }\n",
    ),
    "rate_limit of 'api.path_/upload': burst applies only to algorithm token_bucket, not sliding_window",
  );
  expectError(
    t,
    "burst-without-algorithm.yaml",
    ruleFile("    rate_limit: { unit: minute, requests_per_unit: 10, burst: 20 }\n"),
    "rate_limit of 'api.path_/upload': burst applies only to algorithm token_bucket, not fixed_window",
  );
});

t.test("burst is an integer of at least 1", async (t) => {
  const bucket = (burst: string) =>
    ruleFile(
      `    rate_limit: { unit: second, requests_per_unit: 10, algorithm: token_bucket, burst: ${burst} }\n`,
    );
  const reason = (got: string) =>
    `rate_limit of 'api.path_/upload': burst must be an integer from 1 to 4294967295, got ${got}`;
  expectError(t, "zero-burst.yaml", bucket("0"), reason("0"));
  expectError(t, "negative-burst.yaml", bucket("-3"), reason("-3"));
  expectError(t, "fractional-burst.yaml", bucket("2.5"), reason("2.5"));
  expectError(t, "huge-burst.yaml", bucket("4294967296"), reason("4294967296"));
  // A string is a type mismatch, as for requests_per_unit.
  expectError(
    t,
    "text-burst.yaml",
    bucket("lots"),
    "error loading config file: yaml: unmarshal errors:\n  line 5: cannot unmarshal !!str `lots` into uint32",
  );
});

t.test("unit_multiplier is an integer of at least 1", async (t) => {
  const multiplied = (multiplier: string) =>
    ruleFile(`    rate_limit: { unit: minute, requests_per_unit: 10, unit_multiplier: ${multiplier} }\n`);
  const reason = (got: string) =>
    `rate_limit of 'api.path_/upload': unit_multiplier must be an integer from 1 to 4294967295, got ${got}`;
  expectError(t, "zero-unit-multiplier.yaml", multiplied("0"), reason("0"));
  expectError(t, "negative-unit-multiplier.yaml", multiplied("-5"), reason("-5"));
  expectError(t, "fractional-unit-multiplier.yaml", multiplied("1.5"), reason("1.5"));
});

t.test("a window longer than 100 years is refused", async (t) => {
  expectError(
    t,
    "window-too-long.yaml",
    ruleFile("    rate_limit: { unit: year, requests_per_unit: 10, unit_multiplier: 101 }\n"),
    "rate_limit of 'api.path_/upload': the window of 101 × YEAR is 3185136000 seconds; it must be positive " +
      "and at most 3153600000 seconds (100 years)",
  );
});

t.test("rate_limit and rate_limits together, or an empty rate_limits", async (t) => {
  expectError(
    t,
    "rate-limit-and-rate-limits.yaml",
    ruleFile(
      "    rate_limit: { unit: second, requests_per_unit: 20 }\n" +
        "    rate_limits:\n      - { unit: hour, requests_per_unit: 1000 }\n",
    ),
    "descriptor 'api.path_/upload' has both rate_limit and rate_limits: use one",
  );
  expectError(
    t,
    "empty-rate-limits.yaml",
    ruleFile("    rate_limits: []\n"),
    "descriptor 'api.path_/upload' has an empty rate_limits list",
  );
});

t.test("unlimited: only as a single rate_limit, and without the extensions", async (t) => {
  expectError(
    t,
    "unlimited-in-rate-limits.yaml",
    ruleFile(
      "    rate_limits:\n      - { unit: second, requests_per_unit: 20 }\n      - { unlimited: true }\n",
    ),
    "rate_limits[1] of 'api.path_/upload': unlimited is only allowed in a single rate_limit, not in rate_limits",
  );
  expectError(
    t,
    "unlimited-with-algorithm.yaml",
    ruleFile("    rate_limit: { unlimited: true, algorithm: token_bucket, burst: 5 }\n"),
    "rate_limit of 'api.path_/upload': unlimited cannot be combined with algorithm, burst",
  );
  expectError(
    t,
    "unlimited-with-unit-multiplier.yaml",
    ruleFile("    rate_limit: { unlimited: true, unit_multiplier: 5 }\n"),
    "rate_limit of 'api.path_/upload': unlimited cannot be combined with unit_multiplier",
  );
});

t.test("two limits of one list with the same name", async (t) => {
  expectError(
    t,
    "duplicate-limit-name.yaml",
    ruleFile(
      "    rate_limits:\n" +
        "      - { name: steady, unit: second, requests_per_unit: 20 }\n" +
        "      - { name: steady, unit: hour, requests_per_unit: 1000 }\n",
    ),
    "descriptor 'api.path_/upload' has two rate_limits named 'steady'",
  );
});

t.test("the reference's checks apply to every limit of a list, with their texts", async (t) => {
  expectError(
    t,
    "bad-unit-in-rate-limits.yaml",
    ruleFile(
      "    rate_limits:\n      - { unit: second, requests_per_unit: 20 }\n      - { unit: fortnight, requests_per_unit: 1 }\n",
    ),
    "invalid rate limit unit 'fortnight'",
  );
  expectError(
    t,
    "replaces-self-in-rate-limits.yaml",
    ruleFile(
      "    rate_limits:\n      - { unit: second, requests_per_unit: 20 }\n" +
        "      - { name: hourly, unit: hour, requests_per_unit: 1000, replaces: [{ name: hourly }] }\n",
    ),
    "replaces should not contain name of same descriptor",
  );
  expectError(
    t,
    "empty-replaces-in-rate-limits.yaml",
    ruleFile("    rate_limits:\n      - { unit: second, requests_per_unit: 20, replaces: [{ name: '' }] }\n"),
    "should not have an empty replaces entry",
  );
});

t.test("an extension key outside a limit is refused rather than ignored", async (t) => {
  expectError(
    t,
    "burst-beside-rate-limit.yaml",
    ruleFile(
      "    burst: 20\n    rate_limit: { unit: second, requests_per_unit: 10, algorithm: token_bucket }\n",
    ),
    "config error, 'burst' belongs in rate_limit or an entry of rate_limits, found in descriptor 'api.path_/upload'",
  );
  expectError(
    t,
    "algorithm-at-top-level.yaml",
    `algorithm: sliding_window\n${ruleFile("    rate_limit: { unit: second, requests_per_unit: 10 }\n")}`,
    "config error, 'algorithm' belongs in rate_limit or an entry of rate_limits, found at the top level",
  );
  expectError(
    t,
    "rate-limits-inside-rate-limit.yaml",
    ruleFile(
      "    rate_limit:\n      unit: second\n      requests_per_unit: 10\n      rate_limits: [{ unit: hour }]\n",
    ),
    "config error, 'rate_limits' belongs in a descriptor, found in rate_limit of 'api.path_/upload'",
  );
  expectError(
    t,
    "rate-limits-not-a-list.yaml",
    ruleFile("    rate_limits: { unit: second, requests_per_unit: 10 }\n"),
    "error loading config file: yaml: unmarshal errors:\n  line 5: cannot unmarshal !!map into []config.YamlRateLimit",
  );
});

t.test("a token bucket's burst needs a rate, and a full bucket refills within 100 years", async (t) => {
  expectError(
    t,
    "burst-without-rate.yaml",
    ruleFile("    rate_limit: { unit: minute, requests_per_unit: 0, algorithm: token_bucket, burst: 5 }\n"),
    "rate_limit of 'api.path_/upload': burst needs requests_per_unit above 0 (a token bucket of rate 0 refuses every hit)",
  );
  // 1 token a year, 101 of them: 101 × 31 536 000 s.
  expectError(
    t,
    "bucket-refills-too-slowly.yaml",
    ruleFile("    rate_limit: { unit: year, requests_per_unit: 1, algorithm: token_bucket, burst: 101 }\n"),
    "rate_limit of 'api.path_/upload': a full bucket of 101 tokens takes 3185136000 seconds to refill; it must be at most 3153600000 seconds (100 years)",
  );
  t.doesNotThrow(() =>
    compileRules([
      parseRuleYaml(
        "bucket-of-100-years.yaml",
        ruleFile(
          "    rate_limit: { unit: year, requests_per_unit: 1, algorithm: token_bucket, burst: 100 }\n",
        ),
      ),
    ]),
  );
});

t.test("a limit of a rate_limits list cannot replace its sibling", async (t) => {
  expectError(
    t,
    "replaces-sibling.yaml",
    ruleFile(
      "    rate_limits:\n      - { name: burst, unit: second, requests_per_unit: 5 }\n" +
        "      - { name: steady, unit: hour, requests_per_unit: 100, replaces: [{ name: burst }] }\n",
    ),
    "rate_limits[1] of 'api.path_/upload': replaces 'burst', a limit of the same rate_limits list",
  );
});
