import type { DatabaseLocation } from "./database-location.js";
import { PostgresDatabase } from "./postgres-database.js";
import type { SqlDatabase } from "./sql-database.js";
import { SqliteDatabase } from "./sqlite-database.js";

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** PostgreSQL pool size. */
  readonly maxConnections?: number;
  /** Errors of idle PostgreSQL connections (logged; never fatal). */
  readonly onIdleError: (error: Error) => void;
}

/**
 * Opens the database `DATABASE_URL` names. SQLite opens the file now (rejecting when it cannot);
 * PostgreSQL connects on first use.
 */
export async function openDatabase(
  location: DatabaseLocation,
  options: OpenDatabaseOptions,
): Promise<SqlDatabase> {
  if (location.kind === "sqlite") return SqliteDatabase.open({ path: location.path });
  return new PostgresDatabase({
    connectionString: location.connectionString,
    ...(options.maxConnections !== undefined ? { maxConnections: options.maxConnections } : {}),
    onIdleError: options.onIdleError,
  });
}
