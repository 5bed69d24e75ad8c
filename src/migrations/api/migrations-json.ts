import type { ExecutionRecord, LogRecord } from "../migration-records.js";
import { isoWithOffset } from "../migration-records.js";
import type { MigrationView, ScheduleResult } from "../migration-service.js";
import type { ExecutionJson, LogJson, MigrationJson, ScheduleJson } from "../migrations-json-types.js";

/** The wire shapes of the migrations API (snake_case, as the WordPress original). */
export function migrationJson(m: MigrationView): MigrationJson {
  return {
    id: m.id,
    label: m.label,
    description: m.description,
    tags: m.tags,
    total_batches: m.totalBatches,
    can_run: m.canRun,
    is_applicable: m.isApplicable,
    status: m.status,
  };
}

export function executionJson(e: ExecutionRecord): ExecutionJson {
  return {
    id: e.id,
    migration_id: e.migrationId,
    operation: e.operation,
    parent_execution_id: e.parentExecutionId,
    start_date_gmt: e.startMs === null ? null : isoWithOffset(e.startMs),
    end_date_gmt: e.endMs === null ? null : isoWithOffset(e.endMs),
    status: e.status,
    items_total: e.itemsTotal,
    items_processed: e.itemsProcessed,
    created_at: isoWithOffset(e.createdAtMs),
  };
}

export function logJson(l: LogRecord): LogJson {
  return {
    id: l.id,
    execution_id: l.executionId,
    type: l.type,
    message: l.message,
    data: l.data,
    created_at: isoWithOffset(l.createdAtMs),
  };
}

export function scheduleJson(r: ScheduleResult): ScheduleJson {
  return {
    success: true,
    message: r.message,
    execution_id: r.executionId,
    operation: r.operation,
    from_batch: r.fromBatch,
    to_batch: r.toBatch,
    batch_size: r.batchSize,
  };
}
