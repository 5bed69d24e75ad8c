import { AUTH_SCHEMA } from "../auth/auth-schema.js";
import { describeDatabaseLocation } from "../database/database-location.js";
import { ManagedDatabase } from "../database/managed-database.js";
import { openDatabase } from "../database/open-database.js";
import { applySchemaSteps, type SchemaStep } from "../database/schema-steps.js";
import type { SqlDatabase } from "../database/sql-database.js";
import { DatabaseError, messageOf } from "../errors.js";
import { BUILTIN_MIGRATIONS } from "../migrations/builtin/builtin-migrations.js";
import { BUILTIN_MIGRATIONS_SCHEMA } from "../migrations/builtin/builtin-schema.js";
import { MigrationRegistry } from "../migrations/migration-registry.js";
import { MIGRATIONS_SCHEMA } from "../migrations/migrations-schema.js";
import { loadOperatorMigrations } from "../migrations/operator-migrations.js";
import type { Logger } from "../observability/logger.js";
import type { Settings } from "../settings/load-settings.js";
import { USERS_SCHEMA } from "../users/users-schema.js";

/**
 * The schema steps of every module using the users/migrations database, in the order they apply. The
 * daemon and `ratelimitd-admin` both bring the database to this schema, so either may open it first.
 */
export const MANAGEMENT_SCHEMA_STEPS: readonly SchemaStep[] = [
  ...USERS_SCHEMA,
  ...AUTH_SCHEMA,
  ...MIGRATIONS_SCHEMA,
  ...BUILTIN_MIGRATIONS_SCHEMA,
];

/** A registry holding the built-in migrations (registered as `built-in`). */
export function builtinMigrationRegistry(): MigrationRegistry {
  const registry = new MigrationRegistry();
  for (const definition of BUILTIN_MIGRATIONS) registry.register(definition, "built-in");
  return registry;
}

/**
 * Adds MIGRATIONS_DIR's migrations to `registry` (nothing when the setting is empty). Rejects naming the
 * file when a module cannot be loaded or is not a valid definition.
 */
export async function registerOperatorMigrations(
  registry: MigrationRegistry,
  settings: Settings,
): Promise<void> {
  if (settings.migrationsDir === "") return;
  for (const { file, definition } of await loadOperatorMigrations(settings.migrationsDir)) {
    registry.register(definition, file);
  }
}

/** The daemon's database: retried in the background until it opens (see {@link ManagedDatabase}). */
export function managedDatabase(settings: Settings, logger: Logger): ManagedDatabase {
  return new ManagedDatabase({
    location: settings.databaseUrl,
    steps: MANAGEMENT_SCHEMA_STEPS,
    maxConnections: settings.databaseMaxConnections,
    logger,
  });
}

/**
 * `ratelimitd-admin`'s database: opened once and brought to the current schema. It does not retry: an
 * unreachable database is a {@link DatabaseError} naming it.
 */
export async function openManagementDatabase(settings: Settings): Promise<SqlDatabase> {
  const location = settings.databaseUrl;
  let db: SqlDatabase | undefined;
  try {
    db = await openDatabase(location, {
      maxConnections: settings.databaseMaxConnections,
      // A CLI run is short; an idle connection dropping is not worth a message.
      onIdleError: () => undefined,
    });
    await applySchemaSteps(db, MANAGEMENT_SCHEMA_STEPS);
    return db;
  } catch (error) {
    await db?.close().catch(() => undefined);
    throw new DatabaseError(
      `cannot open the database ${describeDatabaseLocation(location)}: ${messageOf(error)}`,
      { cause: error },
    );
  }
}
