import t from "tap";
import type { Counter } from "../../../src/engine/rule-set.js";
import { statId } from "../../../src/observability/stat-metrics.js";
import { type StatsBatch, StatsRegistry } from "../../../src/observability/stats-registry.js";

const RULE = "ratelimit.service.rate_limit.";

/** The drained counters as `name: delta` lines, sorted (drain order is not part of the contract). */
function deltas(batch: StatsBatch): string[] {
  return batch.counters.map((c) => `${statId(c.name, c.tags)}: ${c.delta}`).sort();
}

/** Snapshot lines of the request-derived rule and domain stats only. */
function ruleLines(registry: StatsRegistry): string[] {
  return registry.snapshotLines().filter((line) => line.startsWith(RULE));
}

/** The decision-4 gauges reported on /stats. */
function capLines(registry: StatsRegistry): string[] {
  return registry.snapshotLines().filter((line) => line.startsWith("ratelimit.stats."));
}

// gostats serialises tags as `.__k=v` suffixes, keys sorted.
t.test("statId appends sorted tags gostats-style", (t) => {
  t.equal(
    statId("ratelimit.service.config_load_success", undefined),
    "ratelimit.service.config_load_success",
  );
  t.equal(statId("a.b", {}), "a.b");
  t.equal(statId("a.b", { zone: "z1", env: "prod" }), "a.b.__env=prod.__zone=z1");
  t.end();
});

// /stats is `name: value` per line, sorted, cumulative since start, the dynamic-key gauges listed (docs/compatibility.md).
t.test("a new registry's snapshot", (t) => {
  t.strictSame(new StatsRegistry({ maxDynamicKeys: 3 }).snapshotLines(), [
    "ratelimit.service.global_shadow_mode: 0",
    "ratelimit.stats.dynamic_keys: 0",
    "ratelimit.stats.dynamic_keys_evicted: 0",
    "ratelimit.stats.dynamic_keys_max: 3",
  ]);
  t.end();
});

t.test("snapshot lines of counters, tagged counters, gauges and timers", (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 10 });
  registry.counter("ratelimit_server.ShouldRateLimit.total_requests").add(2);
  registry.counter("ratelimit.service.config_load_success").add(1);
  registry.counter("ratelimit_server.calls", { method: "Check", code: "ok" }).add(4);
  registry.globalShadowMode.add(1);
  registry.gauge("ratelimit.localcache.entryCount").set(7);
  registry.gauge("ratelimit.localcache.hitCount", undefined, () => 11);
  const timer = registry.timer("ratelimit_server.ShouldRateLimit.response_time");
  timer.record(1.5);
  timer.record(2);
  registry.drain();
  registry.counter("ratelimit.service.config_load_success").add(1);
  t.strictSame(registry.snapshotLines(), [
    "ratelimit.localcache.entryCount: 7",
    "ratelimit.localcache.hitCount: 11",
    "ratelimit.service.config_load_success: 2",
    "ratelimit.service.global_shadow_mode: 1",
    "ratelimit.stats.dynamic_keys: 0",
    "ratelimit.stats.dynamic_keys_evicted: 0",
    "ratelimit.stats.dynamic_keys_max: 10",
    "ratelimit_server.ShouldRateLimit.response_time.count: 2",
    "ratelimit_server.ShouldRateLimit.response_time.sum_ms: 3.5",
    "ratelimit_server.ShouldRateLimit.total_requests: 2",
    "ratelimit_server.calls.__code=ok.__method=Check: 4",
  ]);
  t.equal(registry.counter("ratelimit.service.config_load_success").value, 2, "one counter per name");
  t.end();
});

// The six per-rule stats and domain_not_found, names sanitised as the reference's src/utils/utilities.go
// does.
t.test("rule stat names", (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 10 });
  registry.ruleStats("mongo_cps.database_users").totalHits.add(1);
  registry.ruleStats("d.remote_address_10.0.0.1").overLimit.add(2);
  registry.ruleStats("d.path_a:b|c").nearLimit.add(3);
  registry.domainNotFound("unknown").add(1);
  const lines = ruleLines(registry);
  for (const stat of [
    "total_hits",
    "over_limit",
    "near_limit",
    "over_limit_with_local_cache",
    "within_limit",
    "shadow_mode",
  ]) {
    t.ok(lines.includes(`${RULE}mongo_cps.database_users.${stat}: ${stat === "total_hits" ? 1 : 0}`), stat);
  }
  t.ok(lines.includes(`${RULE}d.remote_address_10_0_0_1.over_limit: 2`), "IPv4 dots become _");
  t.ok(lines.includes(`${RULE}d.path_a_b_c.near_limit: 3`), ": and | become _");
  t.ok(lines.includes(`${RULE}unknown.domain_not_found: 1`));
  t.equal(lines.length, 19);
  t.end();
});

// Request-derived keys are capped by STATS_MAX_DYNAMIC_KEYS (docs/compatibility.md); the least
// recently used is evicted, its unflushed deltas kept.
t.test("eviction at the cap keeps the evicted key's deltas for the next drain", (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 2 });
  registry.ruleStats("d.a").totalHits.add(5);
  registry.ruleStats("d.b").overLimit.add(1);
  t.strictSame(capLines(registry), [
    "ratelimit.stats.dynamic_keys: 2",
    "ratelimit.stats.dynamic_keys_evicted: 0",
    "ratelimit.stats.dynamic_keys_max: 2",
  ]);
  registry.ruleStats("d.c").withinLimit.add(2);
  t.notOk(
    ruleLines(registry).some((line) => line.includes(".d.a.")),
    "d.a is gone from /stats",
  );
  t.strictSame(capLines(registry), [
    "ratelimit.stats.dynamic_keys: 2",
    "ratelimit.stats.dynamic_keys_evicted: 1",
    "ratelimit.stats.dynamic_keys_max: 2",
  ]);
  t.strictSame(deltas(registry.drain()), [
    `${RULE}d.a.total_hits: 5`,
    `${RULE}d.b.over_limit: 1`,
    `${RULE}d.c.within_limit: 2`,
  ]);
  t.strictSame(deltas(registry.drain()), [], "evicted deltas are sent once");
  t.end();
});

t.test("eviction follows recency of use, not of creation", (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 2 });
  registry.ruleStats("d.a");
  registry.ruleStats("d.b");
  registry.ruleStats("d.a").totalHits.add(1);
  registry.ruleStats("d.c");
  const lines = ruleLines(registry);
  t.ok(lines.includes(`${RULE}d.a.total_hits: 1`), "recently used d.a stays");
  t.notOk(
    lines.some((line) => line.includes(".d.b.")),
    "d.b evicted",
  );
  t.end();
});

t.test("an evicted key sends only what was not flushed yet", (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 1 });
  const a = registry.ruleStats("d.a");
  a.totalHits.add(3);
  t.strictSame(deltas(registry.drain()), [`${RULE}d.a.total_hits: 3`]);
  a.totalHits.add(2);
  registry.domainNotFound("gone").add(1);
  t.strictSame(deltas(registry.drain()), [`${RULE}d.a.total_hits: 2`, `${RULE}gone.domain_not_found: 1`]);
  registry.ruleStats("d.b");
  t.strictSame(
    deltas(registry.drain()),
    [],
    "domain_not_found counts toward the cap and its delta was already sent",
  );
  t.end();
});

t.test("configured rules' stats are pinned and never evicted", (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 1 });
  const pinned = registry.pinnedRuleStats("d.configured");
  pinned.totalHits.add(1);
  registry.ruleStats("d.x1");
  registry.ruleStats("d.x2");
  t.equal(registry.ruleStats("d.configured"), pinned, "ruleStats returns the pinned stats");
  t.ok(ruleLines(registry).includes(`${RULE}d.configured.total_hits: 1`));
  t.ok(capLines(registry).includes("ratelimit.stats.dynamic_keys: 1"), "pinned keys are not counted");

  const promoted = registry.ruleStats("d.seen_first");
  promoted.withinLimit.add(4);
  t.equal(registry.pinnedRuleStats("d.seen_first"), promoted, "a dynamic key becomes pinned with its counts");
  registry.ruleStats("d.x3");
  registry.ruleStats("d.x4");
  t.ok(ruleLines(registry).includes(`${RULE}d.seen_first.within_limit: 4`));
  t.end();
});

// Sinks get counter deltas since the last flush, all gauges, and the interval's timer samples.
t.test("drain returns deltas and the interval's timer samples", (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 5 });
  const hits: Counter = registry.counter("ratelimit.service.config_load_success");
  const timer = registry.timer("ratelimit_server.ShouldRateLimit.response_time", { grpc_method: "x" });
  hits.add(3);
  timer.record(4);
  timer.record(9);
  const first = registry.drain();
  t.strictSame(deltas(first), ["ratelimit.service.config_load_success: 3"]);
  t.strictSame(first.timers, [
    {
      name: "ratelimit_server.ShouldRateLimit.response_time",
      tags: { grpc_method: "x" },
      samples: [4, 9],
      sampleRate: 1,
    },
  ]);
  t.strictSame(
    first.gauges.map((g) => `${g.name}: ${g.value}`),
    [
      "ratelimit.stats.dynamic_keys: 0",
      "ratelimit.stats.dynamic_keys_max: 5",
      "ratelimit.stats.dynamic_keys_evicted: 0",
    ],
  );
  const second = registry.drain();
  t.strictSame(second.counters, [], "nothing changed");
  t.strictSame(second.timers, [], "no samples this interval");
  t.equal(second.gauges.length, 3, "gauges are sent at every flush");
  hits.add(2);
  t.strictSame(deltas(registry.drain()), ["ratelimit.service.config_load_success: 2"]);
  t.ok(
    registry.snapshotLines().includes("ratelimit.service.config_load_success: 5"),
    "snapshot stays cumulative",
  );
  t.end();
});

t.test("timer samples are bounded per interval and carry the sample rate", (t) => {
  const registry = new StatsRegistry({ maxDynamicKeys: 5 });
  const timer = registry.timer("ratelimit_server.ShouldRateLimit.response_time");
  for (let i = 0; i < 1500; i++) timer.record(i);
  const [drained] = registry.drain().timers;
  t.equal(drained?.samples.length, 1000);
  t.equal(drained?.sampleRate, 1000 / 1500);
  t.ok(
    registry.snapshotLines().includes("ratelimit_server.ShouldRateLimit.response_time.count: 1500"),
    "count is exact",
  );
  t.end();
});
