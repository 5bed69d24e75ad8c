// Micro-benchmark of the operator console's once-a-second sample (docs/console.md): how long one
// TrafficSampler.sample() blocks the event loop for rule sets of 1,000 to 200,000 configured keys, when no
// rule moved and when a tenth of them did. Needs a built dist/.
// Usage: node micro/console-sampler.mjs   (ms per sample, median of 9, per case; --json for machine output)
import { TrafficSampler } from "../../dist/src/console/traffic-sampler.js";
import { StatsRegistry } from "../../dist/src/observability/stats-registry.js";

function msPerSample(keys, movingShare) {
  const registry = new StatsRegistry({ maxDynamicKeys: 10_000 });
  const stats = [];
  for (let i = 0; i < keys; i++) stats.push(registry.pinnedRuleStats(`bench.key_${i}`));
  let nowMs = 0;
  const sampler = new TrafficSampler({
    stats: registry,
    rules: () => undefined,
    status: () => ({ healthy: true, breaker: "off" }),
    nowMs: () => (nowMs += 1000),
    historyLength: 600,
    maxRulesPerTick: 2000,
  });
  const step = movingShare === 0 ? 0 : Math.round(1 / movingShare);
  const times = [];
  for (let round = 0; round < 12; round++) {
    if (step > 0) for (let i = 0; i < keys; i += step) stats[i].totalHits.add(1);
    const start = process.hrtime.bigint();
    sampler.sample();
    // The first rounds warm the JIT up.
    if (round >= 3) times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
}

const results = [];
for (const keys of [1_000, 10_000, 200_000])
  for (const movingShare of [0, 0.1])
    results.push({ keys, movingShare, msPerSample: msPerSample(keys, movingShare) });
if (process.argv.includes("--json")) console.log(JSON.stringify(results, null, 2));
else
  for (const r of results)
    console.log(
      `${r.msPerSample.toFixed(2).padStart(8)} ms/sample  ${r.keys} rule keys, ${r.movingShare * 100} % of them moved`,
    );
