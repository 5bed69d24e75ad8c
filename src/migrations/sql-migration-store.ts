import type { SqlDatabase, SqlExecutor, SqlValue } from "../database/sql-database.js";
import type { ExecutionStatus } from "./migration.js";
import type { ExecutionRecord, JobRecord, LogQuery, LogRecord, NewLog } from "./migration-records.js";

const EXECUTION_COLUMNS = `id, migration_id, operation, parent_execution_id, status, from_batch, to_batch, batch_size,
  items_total, items_processed, created_at_ms, start_ms, end_ms`;

type Row = Record<string, unknown>;

/**
 * The scheduler's tables in SQL (SQLite and PostgreSQL). Methods taking an executor run inside the
 * caller's transaction; the others on the database.
 */
export class SqlMigrationStore {
  constructor(readonly db: SqlDatabase) {}

  /** Inserts a `scheduled` execution; a unique violation means one is already active. */
  async insertExecution(
    tx: SqlExecutor,
    e: Omit<ExecutionRecord, "id" | "status" | "itemsProcessed" | "startMs" | "endMs">,
  ): Promise<number> {
    const inserted = await tx.query<{ id: number }>(
      `INSERT INTO migration_executions (migration_id, operation, parent_execution_id, status, from_batch, to_batch,
         batch_size, items_total, items_processed, created_at_ms)
       VALUES ($1, $2, $3, 'scheduled', $4, $5, $6, $7, 0, $8) RETURNING id`,
      [
        e.migrationId,
        e.operation,
        e.parentExecutionId,
        e.fromBatch,
        e.toBatch,
        e.batchSize,
        e.itemsTotal,
        e.createdAtMs,
      ],
    );
    return Number(inserted.rows[0]?.id);
  }

  async insertJob(
    tx: SqlExecutor,
    executionId: number,
    batch: number,
    runAtMs: number,
    nowMs: number,
  ): Promise<void> {
    await tx.query(
      `INSERT INTO migration_jobs (execution_id, batch, state, attempt, run_at_ms, created_at_ms)
       VALUES ($1, $2, 'pending', 0, $3, $4)`,
      [executionId, batch, runAtMs, nowMs],
    );
  }

  async insertLogs(tx: SqlExecutor, executionId: number, logs: readonly NewLog[]): Promise<void> {
    for (const log of logs) {
      await tx.query(
        "INSERT INTO migration_logs (execution_id, type, message, data, created_at_ms) VALUES ($1, $2, $3, $4, $5)",
        [executionId, log.type, log.message, JSON.stringify(log.data), log.createdAtMs],
      );
    }
  }

  async execution(ex: SqlExecutor, id: number): Promise<ExecutionRecord | undefined> {
    const found = await ex.query<Row>(`SELECT ${EXECUTION_COLUMNS} FROM migration_executions WHERE id = $1`, [
      id,
    ]);
    return found.rows[0] === undefined ? undefined : executionOf(found.rows[0]);
  }

  async executionsOf(migrationId: string): Promise<ExecutionRecord[]> {
    const found = await this.db.query<Row>(
      `SELECT ${EXECUTION_COLUMNS} FROM migration_executions WHERE migration_id = $1 ORDER BY id`,
      [migrationId],
    );
    return found.rows.map(executionOf);
  }

  /** A migration's latest execution (highest id), if it has any. */
  async latestExecution(ex: SqlExecutor, migrationId: string): Promise<ExecutionRecord | undefined> {
    const found = await ex.query<Row>(
      `SELECT ${EXECUTION_COLUMNS} FROM migration_executions WHERE migration_id = $1 ORDER BY id DESC LIMIT 1`,
      [migrationId],
    );
    return found.rows[0] === undefined ? undefined : executionOf(found.rows[0]);
  }

  /** The status of each migration's latest execution (highest id). */
  async latestStatuses(): Promise<Map<string, ExecutionStatus>> {
    const found = await this.db.query<{ migration_id: string; status: ExecutionStatus }>(
      `SELECT e.migration_id, e.status FROM migration_executions e
       WHERE e.id = (SELECT MAX(id) FROM migration_executions l WHERE l.migration_id = e.migration_id)`,
    );
    return new Map(found.rows.map((row) => [row.migration_id, row.status]));
  }

  async logs(executionId: number, query: LogQuery): Promise<LogRecord[]> {
    const where = ["execution_id = $1"];
    const params: SqlValue[] = [executionId];
    const placeholders = (values: readonly string[]) =>
      values.map((value) => {
        params.push(value);
        return `$${params.length}`;
      });
    if (query.types) where.push(`type IN (${placeholders(query.types).join(", ")})`);
    if (query.notTypes) where.push(`type NOT IN (${placeholders(query.notTypes).join(", ")})`);
    if (query.search) {
      const [term] = placeholders([query.search.toLowerCase()]);
      where.push(
        this.db.dialect === "postgres"
          ? `strpos(lower(message), ${term}) > 0`
          : `instr(lower(message), ${term}) > 0`,
      );
    }
    const column = query.orderBy === "created_at" ? "created_at_ms" : query.orderBy;
    params.push(query.limit, query.offset);
    const found = await this.db.query<Row>(
      `SELECT id, execution_id, type, message, data, created_at_ms FROM migration_logs WHERE ${where.join(" AND ")}
       ORDER BY ${column} ${query.order}, id ${query.order} LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return found.rows.map((row) => ({
      id: Number(row.id),
      executionId: Number(row.execution_id),
      type: row.type as LogRecord["type"],
      message: String(row.message),
      data: JSON.parse(String(row.data)) as Record<string, unknown>,
      createdAtMs: Number(row.created_at_ms),
    }));
  }

  /**
   * Leases the next job that is due (or whose lease expired: its worker died) to `owner` until
   * `leaseUntilMs`. PostgreSQL skips rows another replica is claiming at the same moment; SQLite has one
   * writer at a time anyway.
   */
  async claimJob(owner: string, nowMs: number, leaseUntilMs: number): Promise<JobRecord | undefined> {
    const lock = this.db.dialect === "postgres" ? "FOR UPDATE SKIP LOCKED" : "";
    const claimed = await this.db.query<Row>(
      `UPDATE migration_jobs SET state = 'running', lease_owner = $1, lease_expires_ms = $2
       WHERE id = (SELECT id FROM migration_jobs
                   WHERE (state = 'pending' AND run_at_ms <= $3) OR (state = 'running' AND lease_expires_ms < $3)
                   ORDER BY run_at_ms, id LIMIT 1 ${lock})
       RETURNING id, execution_id, batch, attempt`,
      [owner, leaseUntilMs, nowMs],
    );
    const row = claimed.rows[0];
    return row === undefined
      ? undefined
      : {
          id: Number(row.id),
          executionId: Number(row.execution_id),
          batch: Number(row.batch),
          failures: Number(row.attempt),
        };
  }

  /** Extends a lease still held by `owner`; false when it was lost. */
  async renewLease(jobId: number, owner: string, leaseUntilMs: number): Promise<boolean> {
    const renewed = await this.db.query(
      "UPDATE migration_jobs SET lease_expires_ms = $3 WHERE id = $1 AND lease_owner = $2 AND state = 'running'",
      [jobId, owner, leaseUntilMs],
    );
    return renewed.rowCount > 0;
  }

  /** Ends a job held by `owner` (`done` or `failed`); false when the lease was lost. */
  async endJob(
    tx: SqlExecutor,
    jobId: number,
    owner: string,
    state: "done" | "failed",
    nowMs: number,
  ): Promise<boolean> {
    const ended = await tx.query(
      `UPDATE migration_jobs SET state = $3, finished_at_ms = $4, lease_owner = NULL, lease_expires_ms = NULL
       WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
      [jobId, owner, state, nowMs],
    );
    return ended.rowCount > 0;
  }

  /** Puts a job held by `owner` back in the queue for `runAtMs`, counting a failure when `failed`. */
  async requeueJob(
    ex: SqlExecutor,
    jobId: number,
    owner: string,
    runAtMs: number,
    failed: boolean,
  ): Promise<boolean> {
    const requeued = await ex.query(
      `UPDATE migration_jobs SET state = 'pending', run_at_ms = $3, attempt = attempt + $4, lease_owner = NULL,
         lease_expires_ms = NULL
       WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
      [jobId, owner, runAtMs, failed ? 1 : 0],
    );
    return requeued.rowCount > 0;
  }

  /** `scheduled` → `running` with its start time, when the first batch starts. */
  async markRunning(id: number, nowMs: number): Promise<void> {
    await this.db.query(
      "UPDATE migration_executions SET status = 'running', start_ms = $2 WHERE id = $1 AND status = 'scheduled'",
      [id, nowMs],
    );
  }

  async addProcessed(tx: SqlExecutor, id: number, items: number): Promise<void> {
    await tx.query("UPDATE migration_executions SET items_processed = items_processed + $2 WHERE id = $1", [
      id,
      items,
    ]);
  }

  /** Ends an execution: `completed`, `reverted` or `failed`, with its end time. */
  async finishExecution(tx: SqlExecutor, id: number, status: ExecutionStatus, nowMs: number): Promise<void> {
    await tx.query(
      "UPDATE migration_executions SET status = $2, end_ms = $3, start_ms = COALESCE(start_ms, $3) WHERE id = $1",
      [id, status, nowMs],
    );
  }
}

function nullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

function executionOf(row: Row): ExecutionRecord {
  return {
    id: Number(row.id),
    migrationId: String(row.migration_id),
    operation: row.operation as ExecutionRecord["operation"],
    parentExecutionId: nullableNumber(row.parent_execution_id),
    status: row.status as ExecutionStatus,
    fromBatch: Number(row.from_batch),
    toBatch: Number(row.to_batch),
    batchSize: Number(row.batch_size),
    itemsTotal: Number(row.items_total),
    itemsProcessed: Number(row.items_processed),
    createdAtMs: Number(row.created_at_ms),
    startMs: nullableNumber(row.start_ms),
    endMs: nullableNumber(row.end_ms),
  };
}
