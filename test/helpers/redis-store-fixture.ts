import type { Test } from "tap";
import { createCounterStore } from "../../src/backends/create-counter-store.js";
import { counterStoreOptions } from "../../src/daemon/counter-store-options.js";
import type { CounterStore } from "../../src/engine/counter-store.js";
import { Logger } from "../../src/observability/logger.js";
import { StatsRegistry } from "../../src/observability/stats-registry.js";
import { ThrottledLog } from "../../src/observability/throttled-log.js";
import { loadSettings } from "../../src/settings/load-settings.js";

/** A Redis store built the way the daemon builds it (settings → factory), with its logs and stats. */
export interface RedisStoreUnderTest {
  readonly store: CounterStore;
  readonly stats: StatsRegistry;
  /** What was logged so far, one `<level>: <message>` per line (levels as logrus names them). */
  readonly logs: string[];
}

/**
 * Creates a Redis store from REDIS_* `env` (on top of tcp, pool of 2, 2 s timeout) and, unless
 * `start: false`, starts it. It is closed at the test's teardown.
 */
export async function redisStoreFrom(
  t: Test,
  env: Record<string, string>,
  options: { start?: boolean } = {},
): Promise<RedisStoreUnderTest> {
  const settings = loadSettings({
    BACKEND_TYPE: "redis",
    REDIS_SOCKET_TYPE: "tcp",
    REDIS_POOL_SIZE: "2",
    REDIS_TIMEOUT: "2s",
    ...env,
  });
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
  t.teardown(() => store.close());
  if (options.start !== false) await store.start();
  return { store, stats, logs };
}
