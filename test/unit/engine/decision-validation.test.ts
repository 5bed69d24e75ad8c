import t from "tap";
import { CODE_OK, CODE_OVER_LIMIT } from "../../../src/engine/decision-request.js";
import { InvalidArgumentError, ServiceError } from "../../../src/errors.js";
import {
  CLOCK_SECONDS,
  decideWith,
  entries,
  newEngine,
  newRegistry,
  request,
  ruleCounts,
  rulesFromYaml,
  statValues,
} from "./decision-fixture.js";

const YAML = `domain: d
descriptors:
  - key: k
    rate_limit: {unit: minute, requests_per_unit: 10}
`;

function setUp() {
  const registry = newRegistry();
  return { registry, rules: rulesFromYaml(registry, YAML), engine: newEngine(registry) };
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

// Request validation with the reference's texts.
t.test(
  "empty domain, empty descriptors and no rules are ServiceErrors with the reference texts",
  async (t) => {
    const { engine, rules } = setUp();
    t.throws(() => engine.plan(rules, request("", [entries(["k", "v"])]), CLOCK_SECONDS), {
      name: "ServiceError",
      code: "service_error",
      message: "rate limit domain must not be empty",
    });
    t.throws(() => engine.plan(rules, request("d", []), CLOCK_SECONDS), {
      name: "ServiceError",
      message: "rate limit descriptor list must not be empty",
    });
    t.throws(() => engine.plan(undefined, request("d", [entries(["k", "v"])]), CLOCK_SECONDS), {
      name: "ServiceError",
      message: "no rate limit configuration loaded",
    });
    t.ok(thrown(() => engine.plan(rules, request("d", []), CLOCK_SECONDS)) instanceof ServiceError);
  },
);

// Never crash on a request (docs/compatibility.md): an override with a unit outside SECOND…YEAR is
// rejected before anything is counted.
for (const unit of [0, 7, 99]) {
  t.test(`override with unit ${unit} → InvalidArgumentError, no counter touched`, async (t) => {
    const { engine, rules, registry } = setUp();
    const before = statValues(registry);
    const req = request("d", [
      entries(["k", "v"]),
      { ...entries(["k", "v"]), limit: { requestsPerUnit: 5, unit } },
    ]);
    t.throws(() => engine.plan(rules, req, CLOCK_SECONDS), {
      name: "InvalidArgumentError",
      code: "invalid_argument",
    });
    t.ok(thrown(() => engine.plan(rules, req, CLOCK_SECONDS)) instanceof InvalidArgumentError);
    t.same(statValues(registry), before, "every stat unchanged, the valid descriptor's total_hits included");
    const unknownDomain = request("nope", [{ ...entries(["k", "v"]), limit: { requestsPerUnit: 5, unit } }]);
    t.throws(() => engine.plan(rules, unknownDomain, CLOCK_SECONDS), {
      name: "InvalidArgumentError",
      code: "invalid_argument",
    });
    t.same(statValues(registry), before, "domain_not_found not counted either");
  });
}

t.test("override with every valid unit SECOND…YEAR is accepted", async (t) => {
  const { engine, rules } = setUp();
  const ttls = [1, 60, 3600, 86400, 2592000, 31536000];
  for (let unit = 1; unit <= 6; unit++) {
    const plan = engine.plan(
      rules,
      request("d", [{ ...entries(["k", "v"]), limit: { requestsPerUnit: 5, unit } }]),
      CLOCK_SECONDS,
    );
    t.equal(plan.increments[0]!.ttlSeconds, ttls[unit - 1], `unit ${unit}`);
  }
});

// An override applies regardless of config, with stats key domain.k_v.
t.test("override limit is used instead of the config rule, with its own stats key", async (t) => {
  const { engine, rules, registry } = setUp();
  const req = request("d", [{ ...entries(["k", "v"], ["sub", ""]), limit: { requestsPerUnit: 2, unit: 1 } }]);
  const decision = decideWith(engine, rules, req, [3]);
  t.equal(decision.overallCode, CODE_OVER_LIMIT);
  t.has(decision.statuses[0]!.currentLimit, { requestsPerUnit: 2, unit: 1, name: "" });
  t.match(ruleCounts(registry, "d.k_v.sub"), { total_hits: 1, over_limit: 1 });
  t.match(ruleCounts(registry, "d.k"), { total_hits: 0 });
});

// Per-descriptor hits_addend (even 0) else max(1, request hits_addend).
const HITS_CASES: { name: string; own: bigint | undefined; requestHits: number; expected: number }[] = [
  { name: "request hits_addend 0 means 1", own: undefined, requestHits: 0, expected: 1 },
  { name: "request hits_addend 4 applies", own: undefined, requestHits: 4, expected: 4 },
  { name: "per-descriptor 3 wins over request 4", own: 3n, requestHits: 4, expected: 3 },
  { name: "per-descriptor 0 wins over request 4", own: 0n, requestHits: 4, expected: 0 },
  { name: "per-descriptor 0 wins over request 0", own: 0n, requestHits: 0, expected: 0 },
];
for (const c of HITS_CASES) {
  t.test(c.name, async (t) => {
    const { engine, rules, registry } = setUp();
    const descriptor =
      c.own === undefined ? entries(["k", "v"]) : { ...entries(["k", "v"]), hitsAddend: c.own };
    const plan = engine.plan(rules, request("d", [descriptor], c.requestHits), CLOCK_SECONDS);
    t.equal(plan.increments[0]!.hits, c.expected);
    t.equal(ruleCounts(registry, "d.k").total_hits, c.expected);
  });
}

t.test("hits_addend is per descriptor within one request", async (t) => {
  const { engine, rules } = setUp();
  const req = request("d", [{ ...entries(["k", "a"]), hitsAddend: 2n }, entries(["k", "b"])], 5);
  const plan = engine.plan(rules, req, CLOCK_SECONDS);
  t.same(
    plan.increments.map((i) => [i.key, i.hits]),
    [
      ["d_k_a_2220", 2],
      ["d_k_b_2220", 5],
    ],
  );
});

t.test("a per-descriptor hits_addend beyond 2^53 is rejected without counting", async (t) => {
  const { engine, rules, registry } = setUp();
  const before = statValues(registry);
  const req = request("d", [{ ...entries(["k", "v"]), hitsAddend: 2n ** 60n }]);
  t.throws(() => engine.plan(rules, req, CLOCK_SECONDS), {
    name: "InvalidArgumentError",
    code: "invalid_argument",
  });
  t.same(statValues(registry), before);
});

t.test("a check-only request (hits 0) on an untouched counter is OK with the full remaining", async (t) => {
  const { engine, rules } = setUp();
  const decision = decideWith(engine, rules, request("d", [{ ...entries(["k", "v"]), hitsAddend: 0n }]), [0]);
  t.match(decision.statuses[0], { code: CODE_OK, limitRemaining: 10 });
});
