import { type AdminContext, type AdminContextOptions, adminContext } from "../cli/admin/admin-context.js";
import type { Settings } from "../settings/load-settings.js";
import {
  builtinMigrationRegistry,
  openManagementDatabase,
  registerOperatorMigrations,
} from "./management-database.js";
import { migrationTimings } from "./migration-timings.js";

/**
 * `ratelimitd-admin`'s context: the database DATABASE_URL names, opened with the daemon's schema steps and
 * migration registry. Unlike the daemon it does not retry: an unreachable database is an error naming it.
 */
export async function openAdminContext(
  settings: Settings,
  options: AdminContextOptions,
): Promise<AdminContext> {
  const registry = builtinMigrationRegistry();
  if (options.operatorMigrations) await registerOperatorMigrations(registry, settings);
  const db = await openManagementDatabase(settings);
  return adminContext({
    db,
    registry,
    migrationTimings: migrationTimings(settings),
    shutdownGraceMs: settings.shutdownGraceMs,
  });
}
