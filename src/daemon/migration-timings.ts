import type { MigrationTimings } from "../migrations/migration-worker.js";
import type { Settings } from "../settings/load-settings.js";

/** The MIGRATIONS_* settings that pace a migration worker, the daemon's and `ratelimitd-admin`'s alike. */
export function migrationTimings(settings: Settings): MigrationTimings {
  return {
    retryBaseMs: settings.migrationsRetryBaseMs,
    retryMaxMs: settings.migrationsRetryMaxMs,
    pollIntervalMs: settings.migrationsPollIntervalMs,
    leaseMs: settings.migrationsJobLeaseMs,
  };
}
