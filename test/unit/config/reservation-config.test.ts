// `reservation` on a limit (docs/token-budgets.md, spec §E7): what the YAML and xDS accept, how /rlconfig
// prints it, and each refusal in full, file prefix included, naming the rule by its full key.
import { create } from "@bufbuild/protobuf";
import t, { type Test } from "tap";
import { dumpRuleSet } from "../../../src/config/dump-rule-set.js";
import { refuseUnsupportedAlgorithms } from "../../../src/config/supported-algorithms.js";
import {
  configFromRuleDocument,
  ruleDocumentFromConfig,
} from "../../../src/config/xds/rate-limit-config-conversion.js";
import { parseRuleYaml } from "../../../src/config/yaml/parse-rule-yaml.js";
import { RateLimitConfigSchema } from "../../../src/gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";
import { compileRules, configErrorMessage } from "./config-fixtures.js";

/** A rule file of domain `ai` with one descriptor `user` (any value) whose body is `descriptor`. */
function ruleFile(descriptor: string): string {
  return `domain: ai\ndescriptors:\n  - key: user\n${descriptor}`;
}

function expectError(t: Test, name: string, yaml: string, reason: string): void {
  t.equal(
    configErrorMessage(() => compileRules([parseRuleYaml(name, yaml)])),
    `${name}: ${reason}`,
    name,
  );
}

const BUDGET =
  "    rate_limit:\n      unit: hour\n      requests_per_unit: 10000\n" +
  "      reservation:\n        estimate: 2000\n        ttl: 300s\n        request_id_key: x_request_id\n";

t.test("a reservation on rate_limit and on entries of rate_limits compiles and prints", async (t) => {
  const single = compileRules([parseRuleYaml("budget.yaml", ruleFile(BUDGET))]);
  const rule = single.domains.get("ai")!.exact.get("user")!.limit!;
  t.same(rule.reservation, { estimate: 2000, ttlSeconds: 300, requestIdKey: "x_request_id" });
  t.equal(rule.algorithm, "fixed_window");
  t.equal(
    dumpRuleSet(single),
    "ai.user: unit=HOUR requests_per_unit=10000, shadow_mode: false, quota_mode: false, " +
      "algorithm=fixed_window, unit_multiplier=1, reservation={estimate=2000, ttl=300s, request_id_key=x_request_id}\n",
  );
  const stacked = compileRules([
    parseRuleYaml(
      "stacked.yaml",
      ruleFile(
        "    rate_limits:\n" +
          "      - { name: minute, unit: minute, requests_per_unit: 100 }\n" +
          "      - name: daily\n        unit: day\n        requests_per_unit: 50000\n" +
          "        reservation: { estimate: 500, ttl: 2m }\n",
      ),
    ),
  ]);
  t.equal(
    dumpRuleSet(stacked),
    "ai.user rate_limits[0]: unit=MINUTE requests_per_unit=100, shadow_mode: false, quota_mode: false, algorithm=fixed_window, unit_multiplier=1\n" +
      "ai.user rate_limits[1]: unit=DAY requests_per_unit=50000, shadow_mode: false, quota_mode: false, " +
      "algorithm=fixed_window, unit_multiplier=1, reservation={estimate=500, ttl=120s}\n",
  );
  const hours = compileRules([
    parseRuleYaml(
      "hours.yaml",
      ruleFile(
        "    rate_limit: { unit: day, requests_per_unit: 5, reservation: { estimate: 5, ttl: 24h } }\n",
      ),
    ),
  ]);
  t.same(hours.domains.get("ai")!.exact.get("user")!.limit!.reservation, { estimate: 5, ttlSeconds: 86400 });
});

t.test("a reservation on a sliding window compiles; the step counts U as the sliding estimate", async (t) => {
  const rules = compileRules([
    parseRuleYaml(
      "sliding.yaml",
      ruleFile(
        "    rate_limit: { unit: minute, requests_per_unit: 100, algorithm: sliding_window, reservation: { estimate: 10, ttl: 1m } }\n",
      ),
    ),
  ]);
  const rule = rules.domains.get("ai")!.exact.get("user")!.limit!;
  t.equal(rule.algorithm, "sliding_window");
  t.same(rule.reservation, { estimate: 10, ttlSeconds: 60 });
});

t.test("a rule without a reservation keeps the reference's shape", async (t) => {
  const plain = compileRules([
    parseRuleYaml("plain.yaml", ruleFile("    rate_limit: { unit: hour, requests_per_unit: 10 }\n")),
  ]);
  const rule = plain.domains.get("ai")!.exact.get("user")!.limit!;
  t.equal(rule.reservation, undefined);
  t.equal(rule.algorithm, undefined);
  t.equal(
    dumpRuleSet(plain),
    "ai.user: unit=HOUR requests_per_unit=10, shadow_mode: false, quota_mode: false\n",
  );
});

t.test(
  "a reservation on a token bucket holds within its capacity (burst, by default the rate)",
  async (t) => {
    const rules = compileRules([
      parseRuleYaml(
        "bucket.yaml",
        ruleFile(
          "    rate_limits:\n" +
            "      - { unit: hour, requests_per_unit: 10000, algorithm: token_bucket, reservation: { estimate: 2000, ttl: 5m } }\n" +
            "      - { unit: day, requests_per_unit: 100000, algorithm: token_bucket, burst: 20000, reservation: { estimate: 20000, ttl: 1h } }\n",
        ),
      ),
    ]);
    t.equal(
      dumpRuleSet(rules),
      "ai.user rate_limits[0]: unit=HOUR requests_per_unit=10000, shadow_mode: false, quota_mode: false, " +
        "algorithm=token_bucket, burst=10000, unit_multiplier=1, reservation={estimate=2000, ttl=300s}\n" +
        "ai.user rate_limits[1]: unit=DAY requests_per_unit=100000, shadow_mode: false, quota_mode: false, " +
        "algorithm=token_bucket, burst=20000, unit_multiplier=1, reservation={estimate=20000, ttl=3600s}\n",
    );
  },
);

t.test("the refusals name the file and the rule", async (t) => {
  const limit = (reservation: string, extra = "") =>
    ruleFile(
      `    rate_limit: { unit: hour, requests_per_unit: 10000${extra}, reservation: ${reservation} }\n`,
    );
  const where = "rate_limit of 'ai.user'";
  expectError(t, "no-estimate.yaml", limit("{ ttl: 300s }"), `${where}: reservation needs an estimate`);
  expectError(
    t,
    "zero-estimate.yaml",
    limit("{ estimate: 0, ttl: 300s }"),
    `${where}: reservation estimate must be an integer from 1 to 4294967295, got 0`,
  );
  expectError(
    t,
    "fractional-estimate.yaml",
    limit("{ estimate: 1.5, ttl: 300s }"),
    `${where}: reservation estimate must be an integer from 1 to 4294967295, got 1.5`,
  );
  expectError(
    t,
    "negative-estimate.yaml",
    limit("{ estimate: -3, ttl: 300s }"),
    `${where}: reservation estimate must be an integer from 1 to 4294967295, got -3`,
  );
  expectError(
    t,
    "estimate-over-limit.yaml",
    limit("{ estimate: 10001, ttl: 300s }"),
    `${where}: reservation estimate 10001 is larger than the limit of 10000: no check could ever be admitted`,
  );
  for (const ttl of ["''", "300", "0s", "25h", "1d", "5 m", "-1s", "1.5s"]) {
    expectError(
      t,
      `bad-ttl-${ttl}.yaml`,
      limit(`{ estimate: 10, ttl: ${JSON.stringify(ttl.replaceAll("'", ""))} }`),
      `${where}: reservation ttl '${ttl.replaceAll("'", "")}' is not a duration from 1s to 24h written as Ns, Nm or Nh`,
    );
  }
  expectError(
    t,
    "id-key-on-path.yaml",
    `domain: ai\ndescriptors:\n  - key: tenant\n    descriptors:\n      - key: user\n` +
      "        rate_limit: { unit: hour, requests_per_unit: 100, reservation: { estimate: 10, ttl: 1m, request_id_key: tenant } }\n",
    "rate_limit of 'ai.tenant.user': reservation request_id_key 'tenant' is a key of the rule's own descriptors; it must name another entry",
  );
  expectError(
    t,
    "on-unlimited.yaml",
    ruleFile("    rate_limit: { unlimited: true, reservation: { estimate: 10, ttl: 1m } }\n"),
    `${where}: unlimited cannot be combined with reservation`,
  );
  expectError(
    t,
    "over-bucket-burst.yaml",
    limit("{ estimate: 501, ttl: 1m }", ", algorithm: token_bucket, burst: 500"),
    `${where}: reservation estimate 501 is larger than the limit of 500: no check could ever be admitted`,
  );
  expectError(
    t,
    "in-rate-limits.yaml",
    ruleFile(
      "    rate_limits:\n      - { unit: minute, requests_per_unit: 100 }\n" +
        "      - { unit: hour, requests_per_unit: 5, reservation: { estimate: 6, ttl: 1m } }\n",
    ),
    "rate_limits[1] of 'ai.user': reservation estimate 6 is larger than the limit of 5: no check could ever be admitted",
  );
});

t.test("a request_id_key that keys a descriptor elsewhere in the domain is refused", async (t) => {
  expectError(
    t,
    "id-key-elsewhere.yaml",
    "domain: ai\ndescriptors:\n  - key: user\n" +
      "    rate_limit: { unit: hour, requests_per_unit: 100, reservation: { estimate: 10, ttl: 1m, request_id_key: session } }\n" +
      "  - key: team\n    descriptors:\n      - key: session\n        rate_limit: { unit: hour, requests_per_unit: 5 }\n",
    "reservation of 'ai.user': request_id_key 'session' is also the key of descriptor 'ai.team.session'; " +
      "request-id entries are taken out of every descriptor of domain 'ai' before matching, so that descriptor could never match",
  );
  // Another domain may use the key.
  const rules = compileRules([
    parseRuleYaml(
      "ai.yaml",
      ruleFile(
        "    rate_limit: { unit: hour, requests_per_unit: 100, reservation: { estimate: 10, ttl: 1m, request_id_key: session } }\n",
      ),
    ),
    parseRuleYaml(
      "web.yaml",
      "domain: web\ndescriptors:\n  - key: session\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n",
    ),
  ]);
  t.same([...rules.requestIdKeys!.keys()], ["ai"]);
});

t.test("misplaced reservation keys and a reservation that is no map are refused", async (t) => {
  expectError(
    t,
    "estimate-in-limit.yaml",
    ruleFile("    rate_limit: { unit: hour, requests_per_unit: 10, estimate: 5 }\n"),
    "config error, 'estimate' belongs in a limit's reservation, found in rate_limit of 'ai.user'",
  );
  expectError(
    t,
    "ttl-in-descriptor.yaml",
    ruleFile("    ttl: 5s\n    rate_limit: { unit: hour, requests_per_unit: 10 }\n"),
    "config error, 'ttl' belongs in a limit's reservation, found in descriptor 'ai.user'",
  );
  expectError(
    t,
    "reservation-in-descriptor.yaml",
    ruleFile(
      "    reservation: { estimate: 5, ttl: 5s }\n    rate_limit: { unit: hour, requests_per_unit: 10 }\n",
    ),
    "config error, 'reservation' belongs in rate_limit or an entry of rate_limits, found in descriptor 'ai.user'",
  );
  expectError(
    t,
    "unknown-key-in-reservation.yaml",
    ruleFile(
      "    rate_limit: { unit: hour, requests_per_unit: 10, reservation: { estimate: 5, ttl: 5s, hold: 3 } }\n",
    ),
    "config error, unknown key 'hold'",
  );
  expectError(
    t,
    "reservation-scalar.yaml",
    ruleFile("    rate_limit: { unit: hour, requests_per_unit: 10, reservation: 5 }\n"),
    "error loading config file: yaml: unmarshal errors:\n  line 4: cannot unmarshal !!int `5` into config.YamlReservation",
  );
});

t.test("xDS carries the reservation both ways", async (t) => {
  const document = parseRuleYaml("budget.yaml", ruleFile(BUDGET));
  const { config, dropped } = configFromRuleDocument(document);
  t.same(dropped, []);
  const policy = config.descriptors[0]!.rateLimit!;
  t.equal(policy.reservation?.estimate, 2000);
  t.equal(policy.reservation?.ttl, "300s");
  t.equal(policy.reservation?.requestIdKey, "x_request_id");
  const back = compileRules([ruleDocumentFromConfig(config)]);
  t.same(back.domains.get("ai")!.exact.get("user")!.limit!.reservation, {
    estimate: 2000,
    ttlSeconds: 300,
    requestIdKey: "x_request_id",
  });
  const missing = create(RateLimitConfigSchema, {
    name: "pushed",
    domain: "ai",
    descriptors: [{ key: "user", rateLimit: { unit: 3, requestsPerUnit: 10, reservation: { ttl: "1m" } } }],
  });
  t.equal(
    configErrorMessage(() => compileRules([ruleDocumentFromConfig(missing)])),
    "pushed: rate_limit of 'ai.user': reservation needs an estimate",
  );
  const plain = create(RateLimitConfigSchema, {
    name: "plain",
    domain: "ai",
    descriptors: [{ key: "user", rateLimit: { unit: 3, requestsPerUnit: 10 } }],
  });
  t.equal(ruleDocumentFromConfig(plain).descriptors[0]!.rateLimit!.reservation, undefined);
});

t.test("a store without holds refuses a rule set with a reservation, naming the rule", async (t) => {
  const rules = compileRules([parseRuleYaml("budget.yaml", ruleFile(BUDGET))]);
  t.equal(
    configErrorMessage(() =>
      refuseUnsupportedAlgorithms(rules, { algorithms: ["fixed_window"], reservations: false }, "memcache"),
    ),
    "ai.user: reservation is not supported by the memcache backend, which keeps no holds: use the redis or memory backend",
  );
  // The memory backend's table shared by worker threads (WORKERS above 1) keeps no holds either.
  t.equal(
    configErrorMessage(() =>
      refuseUnsupportedAlgorithms(
        rules,
        { algorithms: ["fixed_window", "sliding_window", "token_bucket"], reservations: false },
        "memory",
      ),
    ),
    "ai.user: reservation is not supported by the memory backend with WORKERS above 1, whose table shared by the worker threads keeps no holds: use the redis backend or WORKERS=1",
  );
  t.equal(
    refuseUnsupportedAlgorithms(
      rules,
      { algorithms: ["fixed_window", "sliding_window", "token_bucket"], reservations: true },
      "memory",
    ),
    rules,
  );
});
