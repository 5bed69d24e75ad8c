import t from "tap";
import { LocalOverLimitCache } from "../../../src/backends/local-over-limit-cache.js";
import { CODE_OK, CODE_OVER_LIMIT } from "../../../src/engine/decision-request.js";
import {
  CLOCK_SECONDS,
  decideWith,
  entries,
  NO_LIMIT,
  newEngine,
  newRegistry,
  request,
  ruleCounts,
  rulesFromYaml,
  stat,
  UINT32_MAX,
} from "./decision-fixture.js";

const YAML = `domain: d
descriptors:
  - key: regular
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: quota_a
    quota_mode: true
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: quota_b
    quota_mode: true
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: whitelisted
  - key: free
    rate_limit: {unlimited: true, requests_per_unit: 55}
  - key: shadowed
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 10}
`;

function setUp(options: Parameters<typeof newEngine>[1] = {}) {
  const registry = newRegistry();
  return { registry, rules: rulesFromYaml(registry, YAML), engine: newEngine(registry, options) };
}

// Examples (reference test/service/ratelimit_test.go, clock 2222 s).
t.test("[OVER(10/min), OK(no limit)] → OVER_LIMIT", async (t) => {
  const { engine, rules, registry } = setUp();
  const decision = decideWith(
    engine,
    rules,
    request("d", [entries(["regular", "x"]), entries(["whitelisted", "y"])]),
    [11],
  );
  t.equal(decision.overallCode, CODE_OVER_LIMIT);
  t.equal(decision.statuses.length, 2);
  t.match(decision.statuses[0], { code: CODE_OVER_LIMIT, limitRemaining: 0, durationUntilResetSeconds: 58 });
  t.has(decision.statuses[0]!.currentLimit, { requestsPerUnit: 10, unit: 2 });
  t.same(decision.statuses[1], NO_LIMIT);
  t.equal(stat(registry, "ratelimit.service.global_shadow_mode"), 0);
});

t.test("global SHADOW_MODE: overall OK, statuses unchanged, global_shadow_mode = 1", async (t) => {
  const { engine, rules, registry } = setUp({ shadowMode: true });
  const decision = decideWith(
    engine,
    rules,
    request("d", [entries(["regular", "x"]), entries(["whitelisted", "y"])]),
    [11],
  );
  t.equal(decision.overallCode, CODE_OK);
  t.equal(decision.statuses[0]!.code, CODE_OVER_LIMIT);
  t.same(decision.statuses[1], NO_LIMIT);
  t.equal(stat(registry, "ratelimit.service.global_shadow_mode"), 1);
  decideWith(engine, rules, request("d", [entries(["regular", "x"])]), [5]);
  t.equal(stat(registry, "ratelimit.service.global_shadow_mode"), 1, "not counted for an OK request");
});

// Quota descriptors only deny when all of them are over.
const QUOTA_CASES: { name: string; keys: string[]; after: number[]; shadow?: boolean; overall: number }[] = [
  {
    name: "regular OVER + quota OK → OVER",
    keys: ["regular", "quota_a"],
    after: [11, 1],
    overall: CODE_OVER_LIMIT,
  },
  {
    name: "regular OK + quota OVER → OVER",
    keys: ["regular", "quota_a"],
    after: [1, 11],
    overall: CODE_OVER_LIMIT,
  },
  { name: "regular OK + quota OK → OK", keys: ["regular", "quota_a"], after: [1, 1], overall: CODE_OK },
  {
    name: "two quota both OVER → OVER",
    keys: ["quota_a", "quota_b"],
    after: [11, 11],
    overall: CODE_OVER_LIMIT,
  },
  { name: "two quota one OVER → OK", keys: ["quota_a", "quota_b"], after: [11, 1], overall: CODE_OK },
  {
    name: "two quota both OVER + SHADOW_MODE → OK",
    keys: ["quota_a", "quota_b"],
    after: [11, 11],
    shadow: true,
    overall: CODE_OK,
  },
];
for (const c of QUOTA_CASES) {
  t.test(c.name, async (t) => {
    const { engine, rules, registry } = setUp({ shadowMode: c.shadow === true });
    const decision = decideWith(
      engine,
      rules,
      request(
        "d",
        c.keys.map((k) => entries([k, "v"])),
      ),
      c.after,
    );
    t.equal(decision.overallCode, c.overall);
    t.same(
      decision.statuses.map((s) => s.code),
      c.after.map((a) => (a > 10 ? CODE_OVER_LIMIT : CODE_OK)),
    );
    t.equal(stat(registry, "ratelimit.service.global_shadow_mode"), c.shadow ? 1 : 0);
  });
}

t.test("QUOTA_MODE makes every descriptor a quota descriptor", async (t) => {
  const { engine, rules } = setUp({ quotaMode: true });
  const decide = (keys: string[], after: number[]) =>
    decideWith(
      engine,
      rules,
      request(
        "d",
        keys.map((k) => entries([k, "v"])),
      ),
      after,
    ).overallCode;
  t.equal(decide(["regular", "quota_a"], [11, 1]), CODE_OK, "one of two over");
  t.equal(decide(["regular", "quota_a"], [11, 11]), CODE_OVER_LIMIT, "all over");
  t.equal(decide(["regular"], [11]), CODE_OVER_LIMIT, "the only one over");
  // A descriptor without a limit is OK, and under QUOTA_MODE it counts as a passed quota descriptor.
  t.equal(decide(["regular", "whitelisted"], [11]), CODE_OK, "a no-limit descriptor passes");
  t.equal(decide(["regular", "free"], [11]), CODE_OVER_LIMIT, "an unlimited descriptor is not counted");
});

// Unlimited is not checked, not counted, reported as 4294967295.
t.test("[10/min, nil, unlimited 55/s] → [OK rem 9, OK, OK rem 4294967295], one increment", async (t) => {
  const { engine, rules, registry } = setUp();
  const req = request("d", [entries(["regular", "x"]), entries(["nomatch", "y"]), entries(["free", "z"])]);
  const plan = engine.plan(rules, req, CLOCK_SECONDS);
  t.same(
    plan.increments.map((i) => i.key),
    ["d_regular_x_2220"],
  );
  const decision = engine.complete(plan, [1], CLOCK_SECONDS);
  t.equal(decision.overallCode, CODE_OK);
  t.match(decision.statuses[0], { code: CODE_OK, limitRemaining: 9, durationUntilResetSeconds: 58 });
  t.same(decision.statuses[1], NO_LIMIT);
  t.same(decision.statuses[2], {
    code: CODE_OK,
    currentLimit: undefined,
    limitRemaining: UINT32_MAX,
    durationUntilResetSeconds: 0,
  });
  t.same(ruleCounts(registry, "d.free"), {
    total_hits: 0,
    over_limit: 0,
    near_limit: 0,
    within_limit: 0,
    shadow_mode: 0,
    over_limit_with_local_cache: 0,
  });
});

// Per-rule shadow_mode rewrites the status, still increments, still fills the local cache.
t.test(
  "rule shadow_mode: OVER rewritten to OK, shadow_mode counted, counter and local cache still used",
  async (t) => {
    const cache = new LocalOverLimitCache(1024 * 1024);
    const { engine, rules, registry } = setUp({ localCache: cache });
    const plan = engine.plan(rules, request("d", [entries(["shadowed", "s"])]), CLOCK_SECONDS);
    t.same(plan.increments, [{ key: "d_shadowed_s_2220", hits: 1, ttlSeconds: 60, perSecond: false }]);
    const decision = engine.complete(plan, [11], CLOCK_SECONDS);
    t.equal(decision.overallCode, CODE_OK);
    t.match(decision.statuses[0], { code: CODE_OK, limitRemaining: 0, durationUntilResetSeconds: 58 });
    t.has(decision.statuses[0]!.currentLimit, { requestsPerUnit: 10 });
    t.match(ruleCounts(registry, "d.shadowed"), { total_hits: 1, over_limit: 1, shadow_mode: 1 });
    t.equal(cache.isOverLimit("d_shadowed_s_2220", 10), true);
  },
);

// Unknown domain.
t.test("unknown domain → OK with only the code, domain_not_found once per descriptor", async (t) => {
  const { engine, rules, registry } = setUp();
  const plan = engine.plan(
    rules,
    request("nope", [entries(["regular", "x"]), entries(["a", "b"])]),
    CLOCK_SECONDS,
  );
  t.same(plan.increments, []);
  const decision = engine.complete(plan, [], CLOCK_SECONDS);
  t.equal(decision.overallCode, CODE_OK);
  t.same(decision.statuses, [NO_LIMIT, NO_LIMIT]);
  t.equal(stat(registry, "ratelimit.service.rate_limit.nope.domain_not_found"), 2);
  t.match(ruleCounts(registry, "d.regular"), { total_hits: 0 });
});
