import type { ExecutionStatus, LogType, MigrationStatus, Operation } from "./migration.js";

// The wire shapes of the migrations API (snake_case, as the WordPress original; README "Migrations API").
// Types only, importing only types: the console's browser app reads them through
// src/console/console-contract.ts, so nothing here may need Node.

/** A migration as `GET /migrations` lists it. */
export interface MigrationJson {
  readonly id: string;
  readonly label: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly total_batches: number;
  readonly can_run: boolean;
  readonly is_applicable: boolean;
  readonly status: MigrationStatus;
}

/** An execution (a run or rollback); times are ISO 8601 with an offset, to the second. */
export interface ExecutionJson {
  readonly id: number;
  readonly migration_id: string;
  readonly operation: Operation;
  readonly parent_execution_id: number | null;
  readonly start_date_gmt: string | null;
  readonly end_date_gmt: string | null;
  readonly status: ExecutionStatus;
  readonly items_total: number;
  readonly items_processed: number;
  readonly created_at: string;
}

/** One entry of an execution's log. */
export interface LogJson {
  readonly id: number;
  readonly execution_id: number;
  readonly type: LogType;
  readonly message: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly created_at: string;
}

/** The answer to a run or rollback. */
export interface ScheduleJson {
  readonly success: true;
  readonly message: string;
  readonly execution_id: number;
  readonly operation: Operation;
  readonly from_batch: number;
  readonly to_batch: number;
  readonly batch_size: number;
}
