import type { SqlExecutor } from "../database/sql-database.js";

/** `up` runs a migration, `down` rolls it back. */
export type Operation = "up" | "down";

/** Types of execution log entries. */
export const LOG_TYPES = ["info", "warning", "error", "debug"] as const;
export type LogType = (typeof LOG_TYPES)[number];

/** What every migration callback gets: the database (inside the batch's transaction for up/down). */
export interface MigrationContext {
  readonly db: SqlExecutor;
  readonly dialect: "sqlite" | "postgres";
}

/** What `up`/`down` get besides the database. */
export interface BatchContext extends MigrationContext {
  readonly executionId: number;
  /** Writes an execution log entry; committed with the batch (kept too when the batch fails). */
  log(type: LogType, message: string, data?: Record<string, unknown>): void;
  /** Aborted when the daemon shuts down: stop early by throwing, and the batch runs again later. */
  readonly signal: AbortSignal;
}

/**
 * A registered, batched, reversible data change over ratelimitd's own data (docs/migrations-api.md).
 *
 * Each batch runs in one database transaction, together with the bookkeeping that records it: a batch is
 * either applied and recorded, or neither — so a crash never makes a batch run twice or get lost. Use only
 * `ctx.db` (the main connection waits for the transaction on SQLite). Work outside the database cannot
 * roll back: make such batches idempotent.
 */
export interface MigrationDefinition {
  /** `[a-zA-Z0-9_-]+`, at most 191 characters. */
  readonly id: string;
  readonly label: string;
  readonly description: string;
  readonly tags: readonly string[];
  /** Items per batch unless a run asks for another size. */
  readonly defaultBatchSize: number;
  /** Extra attempts of a failing batch, with exponential backoff. Default 0. */
  readonly retriesPerBatch?: number;
  /** Items the operation would process; batches = ceil(items / batch size), at least 1. */
  totalItems(operation: Operation, ctx: MigrationContext): Promise<number> | number;
  /** Whether it applies to this installation at all (must not depend on whether it ran). */
  isApplicable(ctx: MigrationContext): Promise<boolean> | boolean;
  /** A runtime gate that may change. */
  canRun(ctx: MigrationContext): Promise<boolean> | boolean;
  /** Checked before and after each batch: true ends the execution early. */
  isDone(operation: Operation, ctx: MigrationContext): Promise<boolean> | boolean;
  /** Processes batch `batch` (from 1); returns the number of items actually processed. */
  up(batch: number, batchSize: number, ctx: BatchContext): Promise<number> | number;
  /** Rolls back batch `batch`; absent when the migration cannot be rolled back. */
  down?(batch: number, batchSize: number, ctx: BatchContext): Promise<number> | number;
}

/** Statuses of migrations and executions (`paused`, `canceled` are reserved, never set). */
export type ExecutionStatus = "scheduled" | "running" | "completed" | "failed" | "reverted";
export type MigrationStatus = ExecutionStatus | "pending" | "not-applicable";

/** Batches of `totalItems` items at `batchSize`: at least 1. */
export function batchCount(totalItems: number, batchSize: number): number {
  return Math.max(1, Math.ceil(totalItems / batchSize));
}
