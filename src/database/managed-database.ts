import { DatabaseError, messageOf } from "../errors.js";
import type { Logger } from "../observability/logger.js";
import { type DatabaseLocation, describeDatabaseLocation } from "./database-location.js";
import { openDatabase } from "./open-database.js";
import { applySchemaSteps, type SchemaStep } from "./schema-steps.js";
import type { SqlDatabase, SqlExecutor, SqlResult, SqlValue } from "./sql-database.js";

/** SQLite failures that come from the file's place, not from a passing condition. */
const UNUSABLE_FILE =
  /\b(EACCES|EPERM|EROFS|ENOTDIR|EEXIST|ENOENT)\b|unable to open database file|readonly database|read-only file system/i;

/** Options of {@link ManagedDatabase}. */
export interface ManagedDatabaseOptions {
  readonly location: DatabaseLocation;
  /** Schema steps of every module using the database, in order. */
  readonly steps: readonly SchemaStep[];
  readonly maxConnections?: number;
  readonly logger: Pick<Logger, "info" | "warn" | "error">;
  /** Delay between failed attempts: doubles from `initialMs` up to `maxMs`. Default 1 s → 30 s. */
  readonly retry?: { readonly initialMs: number; readonly maxMs: number };
}

/**
 * The daemon's users/migrations database: opened and brought to the current schema at start-up, retried
 * in the background while that fails — except a SQLite file that cannot be written where it is, which is
 * reported once and left off. Until it is ready every call fails at once with a
 * {@link DatabaseError} (clients get `500 server error`); the rate-limit service never waits for it.
 */
export class ManagedDatabase implements SqlDatabase {
  readonly dialect: "sqlite" | "postgres";
  readonly #options: ManagedDatabaseOptions;
  #db: SqlDatabase | undefined;
  #lastError = "not started";
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #attempt: Promise<boolean> | undefined;
  readonly #readyListeners: Array<(db: SqlDatabase) => void> = [];

  constructor(options: ManagedDatabaseOptions) {
    this.#options = options;
    this.dialect = options.location.kind;
  }

  /** Makes the first attempt; resolves with its outcome. Later attempts run in the background. */
  start(): Promise<boolean> {
    return this.#connect(this.#options.retry?.initialMs ?? 1000);
  }

  /** True once the schema is current and calls go through. */
  get ready(): boolean {
    return this.#db !== undefined;
  }

  /** Calls `listener` once the database is ready (at once if it already is). */
  onReady(listener: (db: SqlDatabase) => void): void {
    if (this.#db !== undefined) listener(this.#db);
    else this.#readyListeners.push(listener);
  }

  query<Row>(sql: string, params?: readonly SqlValue[]): Promise<SqlResult<Row>> {
    return this.#current().query<Row>(sql, params);
  }

  exec(script: string): Promise<void> {
    return this.#current().exec(script);
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.#current().transaction(work);
  }

  async close(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#attempt;
    await this.#db?.close();
    this.#db = undefined;
  }

  #current(): SqlDatabase {
    if (this.#db !== undefined) return this.#db;
    throw new DatabaseError(`the database is not available: ${this.#lastError}`);
  }

  #connect(delayMs: number): Promise<boolean> {
    const { location, steps, logger, maxConnections, retry } = this.#options;
    const where = describeDatabaseLocation(location);
    this.#attempt = (async () => {
      let db: SqlDatabase | undefined;
      try {
        db = await openDatabase(location, {
          ...(maxConnections !== undefined ? { maxConnections } : {}),
          onIdleError: (error) => logger.warn(`database connection failed while idle: ${error.message}`),
        });
        const applied = await applySchemaSteps(db, steps);
        if (applied.length > 0) logger.info(`database ${where}: schema steps applied: ${applied.join(", ")}`);
      } catch (error) {
        await db?.close().catch(() => undefined);
        this.#lastError = messageOf(error);
        if (this.#stopped) return false;
        if (location.kind === "sqlite" && UNUSABLE_FILE.test(this.#lastError)) {
          // No retry would help (a read-only root file system, a directory the user cannot write): say
          // once what to change; rate limiting goes on without the users and migrations APIs.
          logger.warn(
            `database ${where} cannot be used, the users and migrations APIs are off: ${this.#lastError}; set DATABASE_URL to a writable sqlite: file (docs/containers.md) or to postgres://`,
          );
          return false;
        }
        logger.error(`database ${where} unavailable, retrying in ${delayMs} ms: ${this.#lastError}`);
        this.#timer = setTimeout(
          () => void this.#connect(Math.min(delayMs * 2, retry?.maxMs ?? 30_000)),
          delayMs,
        );
        this.#timer.unref();
        return false;
      }
      if (this.#stopped) {
        await db.close();
        return false;
      }
      this.#db = db;
      for (const listener of this.#readyListeners.splice(0)) listener(db);
      return true;
    })();
    return this.#attempt;
  }
}
