/**
 * The small SQL surface the users, auth and migrations stores are written against, implemented for SQLite
 * (`SqliteDatabase`, in a worker thread) and PostgreSQL (`PostgresDatabase`, a `pg` pool).
 *
 * Statements use PostgreSQL's numbered placeholders (`$1`, `$2`, …) on both; values are strings, numbers
 * or null (no booleans: store 0/1). Integer columns come back as JavaScript numbers on both. Failures are
 * {@link DatabaseError}s; a unique index refusing a row sets `uniqueViolation`.
 */
export type SqlValue = string | number | null;

/** Rows returned (for SELECT or RETURNING) and rows changed. */
export interface SqlResult<Row> {
  readonly rows: Row[];
  readonly rowCount: number;
}

/** Runs statements: on the database itself, or inside one transaction. */
export interface SqlExecutor {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<SqlResult<Row>>;
  /** Runs a script of several statements without parameters (schema changes). */
  exec(script: string): Promise<void>;
}

/** A connection (pool) to one database. */
export interface SqlDatabase extends SqlExecutor {
  readonly dialect: "sqlite" | "postgres";
  /**
   * Runs `work` in a transaction: committed when it resolves, rolled back when it throws. On SQLite the
   * transaction takes the write lock at once (BEGIN IMMEDIATE), so transactions run one at a time.
   * Do not call the database itself from inside `work`, only `tx`.
   */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Waits for work in flight, then closes every connection. */
  close(): Promise<void>;
}
