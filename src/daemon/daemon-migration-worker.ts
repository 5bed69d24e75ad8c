import { BatchRunner } from "../migrations/batch-runner.js";
import type { MigrationRegistry } from "../migrations/migration-registry.js";
import { MigrationWorker } from "../migrations/migration-worker.js";
import type { SqlMigrationStore } from "../migrations/sql-migration-store.js";
import type { Logger } from "../observability/logger.js";
import type { Settings } from "../settings/load-settings.js";
import { migrationTimings } from "./migration-timings.js";

/** The daemon's background migration worker; undefined when MIGRATIONS_WORKER is off. */
export function daemonMigrationWorker(
  settings: Settings,
  store: SqlMigrationStore,
  registry: MigrationRegistry,
  logger: Logger,
): MigrationWorker | undefined {
  if (!settings.migrationsWorker) return undefined;
  const timings = migrationTimings(settings);
  return new MigrationWorker({
    store,
    runner: new BatchRunner({
      store,
      registry,
      logger,
      retryBaseMs: timings.retryBaseMs,
      retryMaxMs: timings.retryMaxMs,
      nowMs: Date.now,
    }),
    logger,
    pollIntervalMs: timings.pollIntervalMs,
    leaseMs: timings.leaseMs,
    nowMs: Date.now,
  });
}
