import type { SqlDatabase } from "./sql-database.js";

/**
 * One versioned change of the database's own schema (not a data migration of the migrations API). Each
 * module (users, auth, migrations) lists its steps; a step runs once, recorded in `ratelimitd_schema`.
 */
export interface SchemaStep {
  /** Unique and never reused: `users-1`, `auth-1`, … */
  readonly id: string;
  readonly sqlite: string;
  readonly postgres: string;
}

/** Arbitrary constant: the advisory lock that serialises schema changes between replicas. */
const SCHEMA_LOCK_KEY = 7_414_263;

/**
 * Brings the schema up to date at start-up, in one transaction (DDL is transactional on both databases):
 * either every missing step is applied or none. Replicas starting together wait for each other
 * (PostgreSQL advisory lock; SQLite's write lock). Resolves with the ids of the steps applied now.
 */
export async function applySchemaSteps(
  db: SqlDatabase,
  steps: readonly SchemaStep[],
  nowMs: () => number = Date.now,
): Promise<string[]> {
  return db.transaction(async (tx) => {
    if (db.dialect === "postgres") await tx.query(`SELECT pg_advisory_xact_lock(${SCHEMA_LOCK_KEY})`);
    await tx.exec(
      "CREATE TABLE IF NOT EXISTS ratelimitd_schema (id TEXT PRIMARY KEY, applied_at_ms BIGINT NOT NULL)",
    );
    const applied = new Set(
      (await tx.query<{ id: string }>("SELECT id FROM ratelimitd_schema")).rows.map((row) => row.id),
    );
    const now: string[] = [];
    for (const step of steps) {
      if (applied.has(step.id)) continue;
      await tx.exec(db.dialect === "postgres" ? step.postgres : step.sqlite);
      await tx.query("INSERT INTO ratelimitd_schema (id, applied_at_ms) VALUES ($1, $2)", [step.id, nowMs()]);
      now.push(step.id);
    }
    return now;
  });
}
