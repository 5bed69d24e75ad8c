import { SqlAuthStore } from "../../auth/sql-auth-store.js";
import type { SqlDatabase } from "../../database/sql-database.js";
import { NotFoundError } from "../../errors.js";
import type { MigrationRegistry } from "../../migrations/migration-registry.js";
import { MigrationService } from "../../migrations/migration-service.js";
import type { MigrationTimings } from "../../migrations/migration-worker.js";
import { SqlMigrationStore } from "../../migrations/sql-migration-store.js";
import { emailKeyOf } from "../../users/email-address.js";
import { SqlUserStore } from "../../users/sql-user-store.js";
import type { User } from "../../users/user.js";

/** What the admin commands work with: the daemon's database, its stores and the migration service. */
export interface AdminContext {
  readonly db: SqlDatabase;
  readonly users: SqlUserStore;
  readonly auth: SqlAuthStore;
  readonly registry: MigrationRegistry;
  readonly migrationStore: SqlMigrationStore;
  /** Scheduling here wakes no worker: `migrations run` starts its own. */
  readonly migrations: MigrationService;
  /** The pacing of the worker `migrations run` starts, the daemon's own. */
  readonly migrationTimings: MigrationTimings;
  /** SHUTDOWN_GRACE_PERIOD: how long that worker's batch in progress may take to finish when it stops. */
  readonly shutdownGraceMs: number;
  /** The user with this e-mail address (any letter case); a `NotFoundError` when there is none. */
  userByEmail(email: string): Promise<User>;
  close(): Promise<void>;
}

/** Options of {@link OpenAdminContext}. */
export interface AdminContextOptions {
  /** Load MIGRATIONS_DIR too (only the migrations commands need it: a bad module must not lock admins out). */
  readonly operatorMigrations: boolean;
}

/**
 * Opens the database the daemon's settings name, brought to the daemon's schema (so the CLI works on a
 * database no daemon has opened yet): `adminContext` over `openAdminDatabase` (src/daemon/admin-context.ts),
 * composed by cmd/ratelimitd-admin.ts.
 */
export type OpenAdminContext = (options: AdminContextOptions) => Promise<AdminContext>;

/** What {@link adminContext} is built from. */
export interface AdminContextParts {
  /** Open and at the current schema; closed by the context's `close`. */
  readonly db: SqlDatabase;
  readonly registry: MigrationRegistry;
  readonly migrationTimings: MigrationTimings;
  readonly shutdownGraceMs: number;
}

/** The stores and services of the admin commands over an open database. */
export function adminContext(parts: AdminContextParts): AdminContext {
  const { db, registry } = parts;
  const users = new SqlUserStore(db);
  const migrationStore = new SqlMigrationStore(db);
  return {
    ...parts,
    users,
    auth: new SqlAuthStore(db),
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
