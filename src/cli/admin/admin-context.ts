import { AUTH_SCHEMA } from "../../auth/auth-schema.js";
import { SqlAuthStore } from "../../auth/sql-auth-store.js";
import { describeDatabaseLocation } from "../../database/database-location.js";
import { openDatabase } from "../../database/open-database.js";
import { applySchemaSteps } from "../../database/schema-steps.js";
import type { SqlDatabase } from "../../database/sql-database.js";
import { DatabaseError, messageOf, NotFoundError } from "../../errors.js";
import { BUILTIN_MIGRATIONS } from "../../migrations/builtin/builtin-migrations.js";
import { BUILTIN_MIGRATIONS_SCHEMA } from "../../migrations/builtin/builtin-schema.js";
import { MigrationRegistry } from "../../migrations/migration-registry.js";
import { MigrationService } from "../../migrations/migration-service.js";
import { MIGRATIONS_SCHEMA } from "../../migrations/migrations-schema.js";
import { loadOperatorMigrations } from "../../migrations/operator-migrations.js";
import { SqlMigrationStore } from "../../migrations/sql-migration-store.js";
import type { Settings } from "../../settings/load-settings.js";
import { emailKeyOf } from "../../users/email-address.js";
import { SqlUserStore } from "../../users/sql-user-store.js";
import type { User } from "../../users/user.js";
import { USERS_SCHEMA } from "../../users/users-schema.js";

/** What the admin commands work with: the daemon's database, its stores and the migration service. */
export interface AdminContext {
  readonly settings: Settings;
  readonly db: SqlDatabase;
  readonly users: SqlUserStore;
  readonly auth: SqlAuthStore;
  readonly registry: MigrationRegistry;
  readonly migrationStore: SqlMigrationStore;
  /** Scheduling here wakes no worker: `migrations run` starts its own. */
  readonly migrations: MigrationService;
  /** The user with this e-mail address (any letter case); a `NotFoundError` when there is none. */
  userByEmail(email: string): Promise<User>;
  close(): Promise<void>;
}

/** Options of {@link openAdminContext}. */
export interface AdminContextOptions {
  /** Load MIGRATIONS_DIR too (only the migrations commands need it: a bad module must not lock admins out). */
  readonly operatorMigrations: boolean;
}

/**
 * Opens the database DATABASE_URL names and brings it to the current schema, with the same steps as the
 * daemon (so the CLI works on a database no daemon has opened yet). Unlike the daemon it does not retry:
 * an unreachable database is an error naming it.
 */
export async function openAdminContext(
  settings: Settings,
  options: AdminContextOptions,
): Promise<AdminContext> {
  const registry = new MigrationRegistry();
  for (const definition of BUILTIN_MIGRATIONS) registry.register(definition, "built-in");
  if (options.operatorMigrations && settings.migrationsDir !== "") {
    for (const { file, definition } of await loadOperatorMigrations(settings.migrationsDir)) {
      registry.register(definition, file);
    }
  }
  const db = await open(settings);
  const users = new SqlUserStore(db);
  const migrationStore = new SqlMigrationStore(db);
  return {
    settings,
    db,
    users,
    auth: new SqlAuthStore(db),
    registry,
    migrationStore,
    migrations: new MigrationService({ registry, store: migrationStore, onScheduled: () => undefined }),
    async userByEmail(email) {
      const found = await users.findByEmailKey(emailKeyOf(email.trim()));
      if (found === undefined) throw new NotFoundError(`no user with e-mail ${email.trim()}`);
      return found.user;
    },
    close: () => db.close(),
  };
}

async function open(settings: Settings): Promise<SqlDatabase> {
  const location = settings.databaseUrl;
  let db: SqlDatabase | undefined;
  try {
    db = await openDatabase(location, {
      maxConnections: settings.databaseMaxConnections,
      // A CLI run is short; an idle connection dropping is not worth a message.
      onIdleError: () => undefined,
    });
    await applySchemaSteps(db, [
      ...USERS_SCHEMA,
      ...AUTH_SCHEMA,
      ...MIGRATIONS_SCHEMA,
      ...BUILTIN_MIGRATIONS_SCHEMA,
    ]);
    return db;
  } catch (error) {
    await db?.close().catch(() => undefined);
    throw new DatabaseError(
      `cannot open the database ${describeDatabaseLocation(location)}: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
}
