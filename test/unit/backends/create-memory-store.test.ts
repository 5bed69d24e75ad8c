// BACKEND_TYPE=memory through the store factory: MEMORY_MAX_BYTES reaches the store, its stats are
// registered under ratelimit.memory.*, and a budget V8's heap cannot hold is warned about at start-up.
import { getHeapStatistics } from "node:v8";
import t from "tap";
import { createCounterStore } from "../../../src/backends/create-counter-store.js";
import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import { counterStoreOptions } from "../../../src/daemon/counter-store-options.js";
import { Logger, silentLogger } from "../../../src/observability/logger.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";
import { ThrottledLog } from "../../../src/observability/throttled-log.js";
import { loadSettings } from "../../../src/settings/load-settings.js";

function create(env: Record<string, string>) {
  const lines: string[] = [];
  const logger = new Logger({
    level: "info",
    format: "json",
    write: (line) => {
      const record = JSON.parse(line) as { level: string; "@message": string };
      lines.push(`${record.level}: ${record["@message"]}`);
    },
  });
  const stats = new StatsRegistry({ maxDynamicKeys: 10 });
  const store = createCounterStore(counterStoreOptions(loadSettings({ BACKEND_TYPE: "memory", ...env })), {
    stats,
    logger,
    throttledLog: new ThrottledLog({ logger: silentLogger }),
  });
  return { store: store as MemoryStore, stats, lines };
}

const memoryLines = (stats: StatsRegistry) =>
  stats.snapshotLines().filter((l) => l.startsWith("ratelimit.memory."));

t.test("the budget, the eviction counter and the gauges", async (t) => {
  const { store, stats, lines } = create({ MEMORY_MAX_BYTES: String(16 * 1024 * 1024) });
  t.ok(store instanceof MemoryStore);
  t.equal(store.maxBytes, 16 * 1024 * 1024);
  await store.increment([{ key: "abc", hits: 1, ttlSeconds: 60, perSecond: false }]);
  t.strictSame(memoryLines(stats), [
    "ratelimit.memory.bytes: 251",
    "ratelimit.memory.evictions: 0",
    "ratelimit.memory.keys: 1",
    "ratelimit.memory.max_bytes: 16777216",
  ]);
  t.strictSame(lines, [], "a budget the heap can hold raises no warning");
});

t.test("a budget over half of V8's heap limit is warned about", async (t) => {
  const heapLimit = getHeapStatistics().heap_size_limit;
  const budget = Math.floor(heapLimit / 2) + 1;
  const { store, lines } = create({ MEMORY_MAX_BYTES: String(budget) });
  t.equal(store.maxBytes, budget);
  t.strictSame(lines, [
    `warning: MEMORY_MAX_BYTES=${budget} is more than half of the V8 heap limit (${heapLimit} bytes): the process may run out of memory first; lower it or raise node's --max-old-space-size`,
  ]);
});
