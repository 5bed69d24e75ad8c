import t from "tap";
import { LocalOverLimitCache } from "../../../src/backends/local-over-limit-cache.js";
import { CODE_OK, CODE_OVER_LIMIT } from "../../../src/engine/decision-request.js";
import { statusFromCounter, statusFromLocalCache } from "../../../src/engine/descriptor-status.js";
import { nearLimitThreshold } from "../../../src/engine/near-limit.js";
import type { UnitValue } from "../../../src/engine/units.js";
import {
  bareRule,
  CLOCK_SECONDS,
  decideWith,
  entries,
  HOUR,
  MINUTE,
  newEngine,
  newRegistry,
  request,
  ruleCounts,
  rulesFromYaml,
  SECOND,
} from "./decision-fixture.js";

// N = floor(float32(L) × float32(0.8)).
t.test("near-limit threshold is computed in float32", async (t) => {
  const expected: [number, number][] = [
    [15, 12],
    [10, 8],
    [20, 16],
    [8, 6],
    [50, 40],
    [5, 4],
  ];
  for (const [limit, near] of expected) t.equal(nearLimitThreshold(limit, 0.8), near, `L=${limit}`);
});

// Fixture table (reference test/redis/fixed_cache_impl_test.go), each row with fresh counters.
const TABLE: {
  l: number;
  unit: UnitValue;
  h: number;
  after: number;
  code: number;
  remaining: number;
  over: number;
  near: number;
  within: number;
}[] = [
  { l: 10, unit: SECOND, h: 1, after: 5, code: CODE_OK, remaining: 5, over: 0, near: 0, within: 1 },
  { l: 10, unit: MINUTE, h: 1, after: 11, code: CODE_OVER_LIMIT, remaining: 0, over: 1, near: 0, within: 0 },
  { l: 10, unit: HOUR, h: 0, after: 11, code: CODE_OVER_LIMIT, remaining: 0, over: 0, near: 0, within: 0 },
  { l: 15, unit: HOUR, h: 1, after: 11, code: CODE_OK, remaining: 4, over: 0, near: 0, within: 1 },
  { l: 15, unit: HOUR, h: 1, after: 13, code: CODE_OK, remaining: 2, over: 0, near: 1, within: 1 },
  { l: 15, unit: HOUR, h: 1, after: 16, code: CODE_OVER_LIMIT, remaining: 0, over: 1, near: 0, within: 0 },
  { l: 20, unit: SECOND, h: 3, after: 5, code: CODE_OK, remaining: 15, over: 0, near: 0, within: 3 },
  { l: 8, unit: SECOND, h: 2, after: 7, code: CODE_OK, remaining: 1, over: 0, near: 1, within: 2 },
  { l: 20, unit: SECOND, h: 3, after: 19, code: CODE_OK, remaining: 1, over: 0, near: 3, within: 3 },
  { l: 20, unit: SECOND, h: 3, after: 22, code: CODE_OVER_LIMIT, remaining: 0, over: 2, near: 1, within: 0 },
  { l: 20, unit: SECOND, h: 7, after: 22, code: CODE_OVER_LIMIT, remaining: 0, over: 2, near: 4, within: 0 },
  { l: 10, unit: SECOND, h: 3, after: 30, code: CODE_OVER_LIMIT, remaining: 0, over: 3, near: 0, within: 0 },
];

for (const row of TABLE) {
  t.test(`fixture row L=${row.l} unit=${row.unit} h=${row.h} after=${row.after}`, async (t) => {
    const registry = newRegistry();
    const rule = bareRule(registry, row.l, row.unit);
    const status = statusFromCounter(rule, rule.stats, row.h, row.after, 0.8, 17);
    t.same(status, {
      code: row.code,
      currentLimit: rule,
      limitRemaining: row.remaining,
      durationUntilResetSeconds: 17,
    });
    t.equal(status.currentLimit, rule, "current_limit is the matched rule");
    t.same(ruleCounts(registry, "d.k"), {
      total_hits: 0, // counted in plan(), before the backend; see the engine test below
      over_limit: row.over,
      near_limit: row.near,
      within_limit: row.within,
      shadow_mode: 0,
      over_limit_with_local_cache: 0,
    });
  });
}

// Fixture row 3 through the engine: h = 0 counts total_hits 0 and nothing else.
t.test("10/h with hits_addend 0 and counter 11: OVER, total_hits 0", async (t) => {
  const registry = newRegistry();
  const rules = rulesFromYaml(
    registry,
    "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 10}\n",
  );
  const decision = decideWith(
    newEngine(registry),
    rules,
    request("d", [{ ...entries(["k", "v"]), hitsAddend: 0n }]),
    [11],
  );
  t.equal(decision.statuses[0]!.code, CODE_OVER_LIMIT);
  t.same(ruleCounts(registry, "d.k"), {
    total_hits: 0,
    over_limit: 0,
    near_limit: 0,
    within_limit: 0,
    shadow_mode: 0,
    over_limit_with_local_cache: 0,
  });
});

// Base-limiter cases (test/limiter/base_limiter_test.go, L=5, N=4). Our API derives before = after − h,
// so "before 2 / after 7" is reproduced with h = 5.
t.test("base limiter: before 2, after 7 → OVER, over 2, near 1, local cache populated", async (t) => {
  const registry = newRegistry();
  const cache = new LocalOverLimitCache(1024 * 1024);
  const rules = rulesFromYaml(
    registry,
    "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 5}\n",
  );
  const engine = newEngine(registry, { localCache: cache });
  const decision = decideWith(engine, rules, request("d", [{ ...entries(["k", "v"]), hitsAddend: 5n }]), [7]);
  t.equal(decision.statuses[0]!.code, CODE_OVER_LIMIT);
  t.equal(decision.statuses[0]!.limitRemaining, 0);
  t.match(ruleCounts(registry, "d.k"), { over_limit: 2, near_limit: 1, within_limit: 0, shadow_mode: 0 });
  t.equal(cache.isOverLimit(`d_k_v_${CLOCK_SECONDS}`, 5), true);
});

t.test("base limiter: shadow variant → code OK, same stats, shadow_mode 2", async (t) => {
  const registry = newRegistry();
  const rule = bareRule(registry, 5, SECOND, true);
  const status = statusFromCounter(rule, rule.stats, 5, 7, 0.8, 1);
  t.same(status, { code: CODE_OK, currentLimit: rule, limitRemaining: 0, durationUntilResetSeconds: 1 });
  t.match(ruleCounts(registry, "d.k"), { over_limit: 2, near_limit: 1, within_limit: 0, shadow_mode: 2 });
});

t.test("base limiter: already over before the hit → over += h, shadow += h", async (t) => {
  const registry = newRegistry();
  const rule = bareRule(registry, 5, SECOND, true);
  statusFromCounter(rule, rule.stats, 2, 9, 0.8, 1);
  t.match(ruleCounts(registry, "d.k"), { over_limit: 2, near_limit: 0, shadow_mode: 2 });
});

t.test("base limiter: local-cache path with h=2", async (t) => {
  const registry = newRegistry();
  const rule = bareRule(registry, 5, SECOND);
  t.same(statusFromLocalCache(rule, rule.stats, 2, 1), {
    code: CODE_OVER_LIMIT,
    currentLimit: rule,
    limitRemaining: 0,
    durationUntilResetSeconds: 1,
  });
  t.same(ruleCounts(registry, "d.k"), {
    total_hits: 0,
    over_limit: 2,
    near_limit: 0,
    within_limit: 0,
    shadow_mode: 0,
    over_limit_with_local_cache: 2,
  });
});

t.test("base limiter: local-cache path with h=2 in shadow mode", async (t) => {
  const registry = newRegistry();
  const rule = bareRule(registry, 5, SECOND, true);
  t.equal(statusFromLocalCache(rule, rule.stats, 2, 1).code, CODE_OK);
  t.match(ruleCounts(registry, "d.k"), { over_limit: 2, over_limit_with_local_cache: 2, shadow_mode: 2 });
});

t.test("base limiter: L=10, after 6, h 1 → OK remaining 4, near 0, within 1", async (t) => {
  const registry = newRegistry();
  const rule = bareRule(registry, 10, SECOND);
  const status = statusFromCounter(rule, rule.stats, 1, 6, 0.8, 1);
  t.equal(status.code, CODE_OK);
  t.equal(status.limitRemaining, 4);
  t.match(ruleCounts(registry, "d.k"), { over_limit: 0, near_limit: 0, within_limit: 1 });
});

// h = 0 is a check-only request.
t.test("h = 0: counter equal to L is OK with remaining 0; above L is OVER", async (t) => {
  const registry = newRegistry();
  const rule = bareRule(registry, 10, MINUTE);
  t.same(statusFromCounter(rule, rule.stats, 0, 10, 0.8, 58), {
    code: CODE_OK,
    currentLimit: rule,
    limitRemaining: 0,
    durationUntilResetSeconds: 58,
  });
  t.equal(statusFromCounter(rule, rule.stats, 0, 11, 0.8, 58).code, CODE_OVER_LIMIT);
  t.match(ruleCounts(registry, "d.k"), { over_limit: 0, near_limit: 0, within_limit: 0 });
});

t.test("requests_per_unit 0 blocks h ≥ 1 and lets h = 0 through", async (t) => {
  const registry = newRegistry();
  const rules = rulesFromYaml(
    registry,
    "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 0}\n",
  );
  const engine = newEngine(registry);
  const blocked = decideWith(engine, rules, request("d", [entries(["k", "v"])]), [1]);
  t.equal(blocked.overallCode, CODE_OVER_LIMIT);
  t.equal(blocked.statuses[0]!.limitRemaining, 0);
  const check = decideWith(engine, rules, request("d", [{ ...entries(["k", "v"]), hitsAddend: 0n }]), [0]);
  t.equal(check.overallCode, CODE_OK);
  t.has(check.statuses[0]!.currentLimit, { requestsPerUnit: 0, unit: MINUTE, name: "" });
  t.equal(check.statuses[0]!.limitRemaining, 0);
  t.match(ruleCounts(registry, "d.k"), { total_hits: 1, over_limit: 1, near_limit: 0, within_limit: 0 });
});
