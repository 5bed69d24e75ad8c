import type { Settings } from "../settings/load-settings.js";
import {
  builtinMigrationRegistry,
  openManagementDatabase,
  registerOperatorMigrations,
} from "./management-database.js";
import { migrationTimings } from "./migration-timings.js";

/**
 * What `ratelimitd-admin` works on: the database DATABASE_URL names, opened with the daemon's schema steps
 * and migration registry (MIGRATIONS_DIR's modules too when `operatorMigrations`), the daemon's migration
 * pacing and SHUTDOWN_GRACE_PERIOD. Unlike the daemon it does not retry: an unreachable database is an
 * error naming it. The admin commands build their stores over it (`adminContext` in src/cli/admin/).
 */
export async function openAdminDatabase(settings: Settings, operatorMigrations: boolean) {
  const registry = builtinMigrationRegistry();
  if (operatorMigrations) await registerOperatorMigrations(registry, settings);
  const db = await openManagementDatabase(settings);
  return {
    db,
    registry,
    migrationTimings: migrationTimings(settings),
    shutdownGraceMs: settings.shutdownGraceMs,
  };
}
