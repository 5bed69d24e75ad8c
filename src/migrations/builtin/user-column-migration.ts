import type { SqlExecutor } from "../../database/sql-database.js";
import type { BatchContext, MigrationDefinition, Operation } from "../migration.js";

/** What differs between the built-in migrations that rewrite one column of `users`. */
export interface UserColumnRewrite {
  readonly id: string;
  readonly label: string;
  readonly description: string;
  readonly tags: readonly string[];
  /** `email` or `name`. */
  readonly column: "email" | "name";
  /** Table keeping the original values: `migration_email_backup`, … */
  readonly backupTable: string;
  /** The value a user's column should have. */
  rewrite(value: string): string;
  /** SQL condition (on `users`) of rows still to rewrite, when it can be said in SQL; else every batch runs. */
  readonly pendingCondition?: string;
}

type Row = { id: number; value: string };

/**
 * A batched, reversible rewrite of one `users` column. `up` pages through the users by id (batch N = the
 * N-th page), saves each original value it changes in a backup table, then rewrites it. `down` pages
 * through the backup table by user id and puts back each original, unless the user changed the value since
 * (a warning says so). Everything a batch does commits with the batch.
 */
export function userColumnMigration(spec: UserColumnRewrite): MigrationDefinition {
  const { column, backupTable } = spec;
  const page = (tx: SqlExecutor, sql: string, batch: number, size: number) =>
    tx.query<Row>(`${sql} LIMIT $1 OFFSET $2`, [size, (batch - 1) * size]);
  return {
    id: spec.id,
    label: spec.label,
    description: spec.description,
    tags: spec.tags,
    defaultBatchSize: 100,
    async totalItems(operation: Operation, { db }) {
      const table = operation === "up" ? "users" : backupTable;
      const counted = await db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`);
      return Number(counted.rows[0]?.n ?? 0);
    },
    isApplicable: () => true,
    canRun: () => true,
    async isDone(operation: Operation, { db }) {
      const condition = operation === "up" ? spec.pendingCondition : "restored = 0";
      if (condition === undefined) return false;
      const table = operation === "up" ? "users" : backupTable;
      const left = await db.query(`SELECT 1 AS x FROM ${table} WHERE ${condition} LIMIT 1`);
      return left.rows.length === 0;
    },
    async up(batch, size, ctx) {
      // A new run starts a new backup: rows restored by an earlier rollback are history.
      if (batch === 1) await ctx.db.query(`DELETE FROM ${backupTable} WHERE restored = 1`);
      const rows = await page(ctx.db, `SELECT id, ${column} AS value FROM users ORDER BY id`, batch, size);
      let changed = 0;
      for (const row of rows.rows) {
        const next = spec.rewrite(row.value);
        if (next === row.value) continue;
        await ctx.db.query(
          `INSERT INTO ${backupTable} (user_id, original, restored) VALUES ($1, $2, 0)
           ON CONFLICT (user_id) DO UPDATE SET original = excluded.original, restored = 0`,
          [row.id, row.value],
        );
        await ctx.db.query(`UPDATE users SET ${column} = $2 WHERE id = $1`, [row.id, next]);
        changed++;
      }
      ctx.log("info", `Batch ${batch}: ${changed} of ${rows.rows.length} users rewritten.`, {
        batch,
        changed,
      });
      return rows.rows.length;
    },
    async down(batch, size, ctx) {
      const rows = await ctx.db.query<{
        user_id: number;
        original: string;
        restored: number;
        value: string | null;
      }>(
        `SELECT b.user_id, b.original, b.restored, u.${column} AS value FROM ${backupTable} b
         LEFT JOIN users u ON u.id = b.user_id ORDER BY b.user_id LIMIT $1 OFFSET $2`,
        [size, (batch - 1) * size],
      );
      let restored = 0;
      for (const row of rows.rows) {
        if (Number(row.restored) === 1) continue;
        await restore(ctx, spec, row);
        restored++;
      }
      ctx.log("info", `Batch ${batch}: ${restored} users restored.`, { batch, restored });
      return rows.rows.length;
    },
  };
}

async function restore(
  ctx: BatchContext,
  spec: UserColumnRewrite,
  row: { user_id: number; original: string; value: string | null },
): Promise<void> {
  const userId = Number(row.user_id);
  // Put back only what this migration wrote; a value changed since then is the user's.
  if (row.value !== null && row.value === spec.rewrite(row.original)) {
    await ctx.db.query(`UPDATE users SET ${spec.column} = $2 WHERE id = $1`, [userId, row.original]);
  } else {
    ctx.log("warning", `User ${userId}'s ${spec.column} changed since the migration ran; left as it is.`, {
      user_id: userId,
    });
  }
  await ctx.db.query(`UPDATE ${spec.backupTable} SET restored = 1 WHERE user_id = $1`, [userId]);
}
