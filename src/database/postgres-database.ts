import pg from "pg";
import { DatabaseError } from "../errors.js";
import type { SqlDatabase, SqlExecutor, SqlResult, SqlValue } from "./sql-database.js";

/** Options of {@link PostgresDatabase}. */
export interface PostgresDatabaseOptions {
  /** Any connection string `pg` accepts (`postgres://user:pass@host:5432/db?options=-c%20search_path%3Dx`). */
  readonly connectionString: string;
  /** Pool size. Default 10. */
  readonly maxConnections?: number;
  /** How long to wait for a connection before failing the request. Default 5000. */
  readonly connectTimeoutMs?: number;
  /** Server-side limit per statement. Default 30000. */
  readonly statementTimeoutMs?: number;
  /** Idle connections' errors (server restarted, network cut), which must not crash the daemon. */
  readonly onIdleError: (error: Error) => void;
}

const UNIQUE_VIOLATION = "23505";
const INT8_OID = 20;

/** PostgreSQL through a `pg` pool: what several ratelimitd replicas share. */
export class PostgresDatabase implements SqlDatabase {
  readonly dialect = "postgres";
  readonly #pool: pg.Pool;

  constructor(options: PostgresDatabaseOptions) {
    this.#pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      statement_timeout: options.statementTimeoutMs ?? 30_000,
      // bigint ids and counters fit in a double long before they matter here; the stores want numbers.
      types: {
        getTypeParser: ((oid: number, format?: "text" | "binary") =>
          oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    this.#pool.on("error", options.onIdleError);
  }

  async query<Row>(sql: string, params: readonly SqlValue[] = []): Promise<SqlResult<Row>> {
    return runQuery<Row>(this.#pool, sql, params);
  }

  async exec(script: string): Promise<void> {
    await runQuery(this.#pool, script, []);
  }

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw databaseErrorOf(error);
    }
    const tx: SqlExecutor = {
      query: (sql, params = []) => runQuery(client, sql, params),
      exec: async (script) => void (await runQuery(client, script, [])),
    };
    let broken: Error | undefined;
    try {
      await runQuery(client, "BEGIN", []);
      const result = await work(tx);
      await runQuery(client, "COMMIT", []);
      return result;
    } catch (error) {
      await runQuery(client, "ROLLBACK", []).catch((rollbackError: Error) => {
        // The connection itself failed: drop it from the pool rather than reuse it.
        broken = rollbackError;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}

async function runQuery<Row>(
  runner: pg.Pool | pg.PoolClient,
  sql: string,
  params: readonly SqlValue[],
): Promise<SqlResult<Row>> {
  try {
    const result = await runner.query(sql, params as SqlValue[]);
    // A multi-statement script answers with one result per statement.
    const last = Array.isArray(result) ? result[result.length - 1] : result;
    return { rows: (last?.rows ?? []) as Row[], rowCount: last?.rowCount ?? 0 };
  } catch (error) {
    throw databaseErrorOf(error);
  }
}

function databaseErrorOf(error: unknown): DatabaseError {
  if (error instanceof DatabaseError) return error;
  const { message, code } = error as { message?: string; code?: string };
  return new DatabaseError(`PostgreSQL: ${message ?? String(error)}`, {
    cause: error,
    uniqueViolation: code === UNIQUE_VIOLATION,
  });
}
