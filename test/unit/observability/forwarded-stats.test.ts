import t from "tap";
import { StatsAbsorber, StatsReporter } from "../../../src/observability/forwarded-stats.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";

// WORKERS > 1 (docs/workers.md, "One set of figures"): each worker's stats reach the main thread's registry,
// summed under the same names.
const registry = () => new StatsRegistry({ maxDynamicKeys: 100 });
const LAYOUT = { bounds: [0.001, 0.01], scale: 0.001 };

function line(stats: StatsRegistry, name: string): string | undefined {
  return stats.snapshotLines().find((l) => l.startsWith(`${name}: `));
}

t.test("counters, timers and gauges of two workers add up in the main thread", async (t) => {
  const main = registry();
  main.setTimerHistograms(() => LAYOUT);
  main.counter("ratelimit.service.rate_limit.d.k.total_hits").add(1);
  const own = main.gauge("ratelimit.localcache.entries");
  own.set(3);
  const absorber = new StatsAbsorber(main);
  const workers = [registry(), registry()];
  const reporters = workers.map((w) => new StatsReporter(w));
  for (const [i, w] of workers.entries()) {
    w.setTimerHistograms(() => LAYOUT);
    w.counter("ratelimit.service.rate_limit.d.k.total_hits").add(10 * (i + 1));
    w.counter("ratelimit.workers.requests", { worker: String(i + 1) }).add(5);
    w.timer("ratelimit_server.ShouldRateLimit.response_time").record(0.5);
    w.timer("ratelimit_server.ShouldRateLimit.response_time").record(5);
    w.gauge("ratelimit.localcache.entries").set(100 * (i + 1));
  }
  for (const [i, r] of reporters.entries()) absorber.absorb(i + 1, r.take());
  t.equal(
    line(main, "ratelimit.service.rate_limit.d.k.total_hits"),
    "ratelimit.service.rate_limit.d.k.total_hits: 31",
  );
  t.equal(line(main, "ratelimit.workers.requests.__worker=2"), "ratelimit.workers.requests.__worker=2: 5");
  t.equal(
    line(main, "ratelimit_server.ShouldRateLimit.response_time.count"),
    "ratelimit_server.ShouldRateLimit.response_time.count: 4",
  );
  t.equal(
    line(main, "ratelimit_server.ShouldRateLimit.response_time.sum_ms"),
    "ratelimit_server.ShouldRateLimit.response_time.sum_ms: 11",
  );
  t.same([...main.timer("ratelimit_server.ShouldRateLimit.response_time").histogram!.counts], [2, 2, 0]);
  t.equal(line(main, "ratelimit.localcache.entries"), "ratelimit.localcache.entries: 303", "3 + 100 + 200");

  // A second report carries only what changed since the first.
  workers[0]!.counter("ratelimit.service.rate_limit.d.k.total_hits").add(2);
  workers[0]!.gauge("ratelimit.localcache.entries").set(7);
  absorber.absorb(1, reporters[0]!.take());
  absorber.absorb(2, reporters[1]!.take());
  t.equal(
    line(main, "ratelimit.service.rate_limit.d.k.total_hits"),
    "ratelimit.service.rate_limit.d.k.total_hits: 33",
  );
  t.equal(
    line(main, "ratelimit_server.ShouldRateLimit.response_time.count"),
    "ratelimit_server.ShouldRateLimit.response_time.count: 4",
  );
  t.equal(line(main, "ratelimit.localcache.entries"), "ratelimit.localcache.entries: 210");

  // A worker that ended: its gauges stop counting, its counters stay counted.
  absorber.forget(2);
  t.equal(line(main, "ratelimit.localcache.entries"), "ratelimit.localcache.entries: 10");
  t.equal(
    line(main, "ratelimit.service.rate_limit.d.k.total_hits"),
    "ratelimit.service.rate_limit.d.k.total_hits: 33",
  );
  // The sinks get each count once: the main thread's drain has the summed deltas.
  const drained = main.drain().counters.find((c) => c.name === "ratelimit.service.rate_limit.d.k.total_hits");
  t.equal(drained?.delta, 33);
});

t.test("counters the main thread does not pin stay in its bounded LRU", async (t) => {
  const main = new StatsRegistry({ maxDynamicKeys: 2 });
  const absorber = new StatsAbsorber(main);
  const worker = registry();
  const reporter = new StatsReporter(worker);
  for (const key of ["a", "b", "c"]) worker.ruleStats(`d.${key}`).totalHits.add(1);
  absorber.absorb(1, reporter.take());
  const dynamic = main.snapshotLines().filter((l) => l.startsWith("ratelimit.service.rate_limit.d."));
  t.equal(dynamic.length, 2, "two of the three keys kept (STATS_MAX_DYNAMIC_KEYS=2)");
  t.equal(line(main, "ratelimit.stats.dynamic_keys_evicted"), "ratelimit.stats.dynamic_keys_evicted: 1");
});
