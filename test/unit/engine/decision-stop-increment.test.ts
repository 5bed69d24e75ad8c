import t from "tap";
import { LocalOverLimitCache } from "../../../src/backends/local-over-limit-cache.js";
import { CODE_OK, CODE_OVER_LIMIT } from "../../../src/engine/decision-request.js";
import {
  CLOCK_SECONDS,
  entries,
  newEngine,
  newRegistry,
  request,
  ruleCounts,
  rulesFromYaml,
} from "./decision-fixture.js";

// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT, engine side: suppressIncrementsWhenOverLimit.
const YAML = `domain: d
descriptors:
  - key: key2
    rate_limit: {unit: minute, requests_per_unit: 20}
  - key: key3
    rate_limit: {unit: hour, requests_per_unit: 10}
`;
const REQ = request("d", [entries(["key2", "value2"]), entries(["key3", "value3"])]);

function setUp(localCache?: LocalOverLimitCache) {
  const registry = newRegistry();
  const engine = newEngine(registry, { localCache });
  const rules = rulesFromYaml(registry, YAML);
  return { registry, engine, rules };
}

t.test("a key that would go over keeps its hits; every other key is incremented by 0", async (t) => {
  const { engine, rules } = setUp();
  const plan = engine.plan(rules, REQ, CLOCK_SECONDS);
  engine.suppressIncrementsWhenOverLimit(plan, [10, 10]);
  t.same(
    plan.increments.map((i) => [i.key, i.hits]),
    [
      ["d_key2_value2_2220", 0],
      ["d_key3_value3_0", 1],
    ],
  );
});

t.test("nothing changes when no key would go over (after = current + hits, strictly greater)", async (t) => {
  const { engine, rules } = setUp();
  const plan = engine.plan(rules, { ...REQ, hitsAddend: 2 }, CLOCK_SECONDS);
  engine.suppressIncrementsWhenOverLimit(plan, [18, 8]);
  t.same(
    plan.increments.map((i) => i.hits),
    [2, 2],
  );
});

t.test("several over keys all keep their hits", async (t) => {
  const { engine, rules } = setUp();
  const plan = engine.plan(rules, { ...REQ, hitsAddend: 3 }, CLOCK_SECONDS);
  engine.suppressIncrementsWhenOverLimit(plan, [18, 8]);
  t.same(
    plan.increments.map((i) => i.hits),
    [3, 3],
  );
});

t.test("a zero-hit key already over counts as over and the others get 0", async (t) => {
  const { engine, rules } = setUp();
  const req = request("d", [entries(["key2", "value2"]), { ...entries(["key3", "value3"]), hitsAddend: 0n }]);
  const plan = engine.plan(rules, req, CLOCK_SECONDS);
  engine.suppressIncrementsWhenOverLimit(plan, [1, 11]);
  t.same(
    plan.increments.map((i) => i.hits),
    [0, 0],
  );
});

t.test("a local-cache hit (no current values) sends 0 for every remaining key", async (t) => {
  const cache = new LocalOverLimitCache(1024 * 1024);
  cache.markOverLimit("d_key3_value3_0", 10, 3600);
  const { engine, rules } = setUp(cache);
  const plan = engine.plan(rules, REQ, CLOCK_SECONDS);
  t.equal(plan.anyLocalCacheHit, true);
  engine.suppressIncrementsWhenOverLimit(plan, undefined);
  t.same(
    plan.increments.map((i) => [i.key, i.hits]),
    [["d_key2_value2_2220", 0]],
  );
});

// Statuses use before = result − original addend; stats count the full addend (envoyproxy/ratelimit #808).
t.test("statuses and stats after a suppressed increment", async (t) => {
  const { engine, rules, registry } = setUp();
  const plan = engine.plan(rules, REQ, CLOCK_SECONDS);
  engine.suppressIncrementsWhenOverLimit(plan, [10, 10]);
  const decision = engine.complete(plan, [10, 11], CLOCK_SECONDS);
  t.equal(decision.overallCode, CODE_OVER_LIMIT);
  t.same(
    decision.statuses.map((s) => [s.code, s.limitRemaining]),
    [
      [CODE_OK, 10],
      [CODE_OVER_LIMIT, 0],
    ],
  );
  t.match(ruleCounts(registry, "d.key2"), { total_hits: 1, within_limit: 1, near_limit: 0, over_limit: 0 });
  t.match(ruleCounts(registry, "d.key3"), { total_hits: 1, over_limit: 1 });
});
