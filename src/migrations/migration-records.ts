import type { ExecutionStatus, LogType, Operation } from "./migration.js";

/** An execution as stored. Times are milliseconds since the epoch. */
export interface ExecutionRecord {
  readonly id: number;
  readonly migrationId: string;
  readonly operation: Operation;
  readonly parentExecutionId: number | null;
  readonly status: ExecutionStatus;
  readonly fromBatch: number;
  readonly toBatch: number;
  readonly batchSize: number;
  readonly itemsTotal: number;
  readonly itemsProcessed: number;
  readonly createdAtMs: number;
  readonly startMs: number | null;
  readonly endMs: number | null;
}

/** An execution log entry as stored. */
export interface LogRecord {
  readonly id: number;
  readonly executionId: number;
  readonly type: LogType;
  readonly message: string;
  readonly data: Record<string, unknown>;
  readonly createdAtMs: number;
}

/** A log entry about to be written. */
export interface NewLog {
  readonly type: LogType;
  readonly message: string;
  readonly data: Record<string, unknown>;
  readonly createdAtMs: number;
}

/** A batch job claimed by a worker. `failures`: failed attempts so far. */
export interface JobRecord {
  readonly id: number;
  readonly executionId: number;
  readonly batch: number;
  readonly failures: number;
}

/** A validated query of an execution's logs. */
export interface LogQuery {
  /** Only these types (undefined: all). */
  readonly types?: readonly LogType[];
  /** Not these types. */
  readonly notTypes?: readonly LogType[];
  /** Case-insensitive substring of the message. */
  readonly search?: string;
  readonly limit: number;
  readonly offset: number;
  readonly order: "ASC" | "DESC";
  readonly orderBy: "id" | "type" | "created_at";
}

/** ISO 8601 with an explicit offset, to the second: `2026-11-21T12:00:00+00:00`. */
export function isoWithOffset(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}+00:00`;
}
