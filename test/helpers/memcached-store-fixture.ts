import type { Test } from "tap";
import { createCounterStore } from "../../src/backends/create-counter-store.js";
import { MemcachedStore } from "../../src/backends/memcached/memcached-store.js";
import { counterStoreOptions } from "../../src/daemon/counter-store-options.js";
import { Logger } from "../../src/observability/logger.js";
import { StatsRegistry } from "../../src/observability/stats-registry.js";
import { ThrottledLog } from "../../src/observability/throttled-log.js";
import { loadSettings } from "../../src/settings/load-settings.js";

/** A memcached store built the way the daemon builds it (settings → factory), with its logs and stats. */
export interface MemcachedStoreUnderTest {
  readonly store: MemcachedStore;
  readonly stats: StatsRegistry;
  /** What was logged so far, one `<level>: <message>` per line (levels as logrus names them). */
  readonly logs: string[];
  /** `ratelimit.memcache.<name>` (with `code` when given) as `/stats` shows it. */
  stat(name: string, code?: string): number;
}

/**
 * Creates a memcached store from MEMCACHE_* `env` and, unless `start: false`, starts it. It is closed at
 * the test's teardown.
 */
export async function memcachedStoreFrom(
  t: Test,
  env: Record<string, string>,
  options: { start?: boolean } = {},
): Promise<MemcachedStoreUnderTest> {
  const settings = loadSettings({ BACKEND_TYPE: "memcache", ...env });
  const logs: string[] = [];
  const logger = new Logger({
    level: "info",
    format: "json",
    write: (line) => {
      const record = JSON.parse(line) as { level: string; "@message": string };
      logs.push(`${record.level}: ${record["@message"]}`);
    },
  });
  const stats = new StatsRegistry({ maxDynamicKeys: 100 });
  const store = createCounterStore(counterStoreOptions(settings), {
    stats,
    logger,
    throttledLog: new ThrottledLog({ logger }),
  });
  if (!(store instanceof MemcachedStore))
    throw new Error(`BACKEND_TYPE=memcache built a ${store.name} store`);
  t.teardown(() => store.close());
  if (options.start !== false) await store.start();
  const stat = (name: string, code?: string) => {
    const id = `ratelimit.memcache.${name}${code === undefined ? "" : `.__code=${code}`}`;
    const line = stats.snapshotLines().find((l) => l.startsWith(`${id}: `));
    return Number(line?.slice(id.length + 2) ?? Number.NaN);
  };
  return { store, stats, logs, stat };
}
