// The console's sampler (src/console/traffic-sampler.ts): rates from the rule counters' movement between
// samples, per configured rule and summed over every rule key (request-derived ones too), the history
// without per-rule detail and bounded, and counts from before the console started left out.
import t from "tap";
import { TrafficSampler } from "../../../src/console/traffic-sampler.js";
import type { RuleSet } from "../../../src/engine/rule-set.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";
import { rulesFromYaml } from "../../helpers/engine-fixtures.js";

const YAML = `domain: d
descriptors:
  - key: a
    rate_limit: { unit: minute, requests_per_unit: 10 }
  - key: b
    detailed_metric: true
    rate_limit: { unit: minute, requests_per_unit: 10 }
`;

function sampler(registry: StatsRegistry, rules: RuleSet, clock: { ms: number }, historyLength = 3) {
  return new TrafficSampler({
    stats: registry,
    rules: () => rules,
    status: () => ({ healthy: true, breaker: "closed" }),
    nowMs: () => clock.ms,
    historyLength,
    maxRulesPerTick: 1000,
  });
}

t.test("rates over the interval, per rule and in all; counts from before the start left out", async (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 100 });
  const rules = rulesFromYaml(registry, YAML);
  const a = registry.pinnedRuleStats("d.a");
  a.totalHits.add(100);
  const clock = { ms: 10_000 };
  const traffic = sampler(registry, rules, clock);
  a.totalHits.add(6);
  a.overLimit.add(2);
  a.nearLimit.add(1);
  // One of the two over the limit was let through by shadow mode: refused are over_limit − shadow_mode.
  a.shadowMode.add(1);
  // detailed_metric counts under a key of its own, not the rule's: in the sums, not in `rules`.
  const detailed = registry.ruleStats("d.b_x");
  detailed.totalHits.add(4);
  clock.ms += 2000;
  const tick = traffic.sample();
  t.strictSame(tick, {
    atMs: 12_000,
    hits: 5,
    ok: 4.5,
    over: 0.5,
    near: 0.5,
    shadow: 0.5,
    healthy: true,
    breaker: "closed",
    rules: { "d.a": { hits: 3, over: 1, near: 0.5, totalHits: 106, totalOver: 2, totalNear: 1 } },
  });
  clock.ms += 1000;
  const quiet = traffic.sample();
  t.strictSame(quiet.rules, {});
  t.equal(quiet.hits, 0);
  t.strictSame(
    traffic.history().map((h) => [h.atMs, h.hits, h.rules]),
    [
      [12_000, 5, {}],
      [13_000, 0, {}],
    ],
  );
});

t.test("the history keeps the last ticks only; a new rule set is followed", async (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 100 });
  let rules = rulesFromYaml(registry, YAML);
  const clock = { ms: 0 };
  const traffic = new TrafficSampler({
    stats: registry,
    rules: () => rules,
    status: () => ({ healthy: false, breaker: "open" }),
    nowMs: () => clock.ms,
    historyLength: 2,
    maxRulesPerTick: 1000,
  });
  for (let i = 0; i < 4; i++) {
    clock.ms += 1000;
    traffic.sample();
  }
  t.strictSame(
    traffic.history().map((h) => h.atMs),
    [3000, 4000],
  );
  rules = rulesFromYaml(
    registry,
    "domain: e\ndescriptors:\n  - key: c\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n",
  );
  registry.pinnedRuleStats("e.c").totalHits.add(3);
  clock.ms += 1000;
  const tick = traffic.sample();
  t.strictSame(Object.keys(tick.rules), ["e.c"]);
  t.equal(tick.healthy, false);
  t.equal(tick.breaker, "open");
});

t.test("a tick carries the busiest rules only, at most maxRulesPerTick", async (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 100 });
  const yaml = ["domain: d", "descriptors:"];
  for (let i = 0; i < 5; i++)
    yaml.push(`  - { key: k${i}, rate_limit: { unit: hour, requests_per_unit: 9 } }`);
  const rules = rulesFromYaml(registry, `${yaml.join("\n")}\n`);
  const clock = { ms: 0 };
  const traffic = new TrafficSampler({
    stats: registry,
    rules: () => rules,
    status: () => ({ healthy: true, breaker: "off" }),
    nowMs: () => clock.ms,
    historyLength: 2,
    maxRulesPerTick: 2,
  });
  for (let i = 0; i < 5; i++) registry.pinnedRuleStats(`d.k${i}`).totalHits.add([3, 9, 1, 7, 2][i]!);
  clock.ms += 1000;
  const tick = traffic.sample();
  t.strictSame(Object.keys(tick.rules), ["d.k1", "d.k3"]);
  t.equal(tick.hits, 22, "the sums still count every rule");
});

t.test("keys whose stat names sanitise alike share counters: counted once", async (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 100 });
  const rules = rulesFromYaml(
    registry,
    "domain: d\ndescriptors:\n  - key: a\n    rate_limit: { unit: hour, requests_per_unit: 9 }\n",
  );
  const clock = { ms: 0 };
  const traffic = sampler(registry, rules, clock);
  registry.pinnedRuleStats("d.x:1");
  registry.pinnedRuleStats("d.x_1");
  t.equal(
    registry.pinnedRuleStats("d.x:1").totalHits,
    registry.pinnedRuleStats("d.x_1").totalHits,
    "one counter",
  );
  registry.pinnedRuleStats("d.x_1").totalHits.add(4);
  clock.ms += 1000;
  t.equal(traffic.sample().hits, 4);
});
