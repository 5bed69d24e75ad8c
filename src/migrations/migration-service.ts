import { ConflictError, DatabaseError, InvalidArgumentError, NotFoundError } from "../errors.js";
import type { MigrationContext, MigrationStatus, Operation } from "./migration.js";
import { batchCount } from "./migration.js";
import type { ExecutionRecord, LogQuery, LogRecord } from "./migration-records.js";
import type { MigrationRegistry } from "./migration-registry.js";
import type { SqlMigrationStore } from "./sql-migration-store.js";

/** Largest batch a run may ask for. */
export const MAX_BATCH_SIZE = 10_000;

/** A migration as the list shows it. */
export interface MigrationView {
  readonly id: string;
  readonly label: string;
  readonly description: string;
  readonly tags: readonly string[];
  /** Batches at the default batch size, for `up`. */
  readonly totalBatches: number;
  readonly canRun: boolean;
  readonly isApplicable: boolean;
  readonly status: MigrationStatus;
}

/** Run/rollback parameters as received (JSON numbers or numeric strings); validated here. */
export interface ScheduleParams {
  readonly fromBatch?: unknown;
  readonly toBatch?: unknown;
  readonly batchSize?: unknown;
}

/** The answer to a run or rollback. */
export interface ScheduleResult {
  readonly message: string;
  readonly executionId: number;
  readonly operation: Operation;
  readonly fromBatch: number;
  readonly toBatch: number;
  readonly batchSize: number;
}

/** Options of {@link MigrationService}. */
export interface MigrationServiceOptions {
  readonly registry: MigrationRegistry;
  readonly store: SqlMigrationStore;
  /** Told when work was scheduled, so a local worker starts at once. */
  readonly onScheduled: () => void;
  readonly nowMs?: () => number;
}

/**
 * The migrations API's operations, shared by the REST routes, the Connect service and the admin CLI.
 * Refusals are `NotFoundError` (404), `InvalidArgumentError` (400) and `ConflictError` (409: an execution
 * already active, or a rollback of a migration already rolled back) with the messages docs/migrations-api.md lists
 * and test/e2e/migrations/migrations-api-execution-cases.ts asserts.
 */
export class MigrationService {
  readonly #options: MigrationServiceOptions;
  readonly #nowMs: () => number;

  constructor(options: MigrationServiceOptions) {
    this.#options = options;
    this.#nowMs = options.nowMs ?? Date.now;
  }

  /** Every migration, or those carrying any of `tags` (exact, case-sensitive). */
  async list(tags?: readonly string[]): Promise<MigrationView[]> {
    const { registry, store } = this.#options;
    const latest = await store.latestStatuses();
    const ctx = this.#context();
    const wanted = registry
      .all()
      .filter((d) => tags === undefined || d.tags.some((tag) => tags.includes(tag)));
    return Promise.all(
      wanted.map(async (d) => {
        const isApplicable = await d.isApplicable(ctx);
        return {
          id: d.id,
          label: d.label,
          description: d.description,
          tags: d.tags,
          totalBatches: batchCount(await d.totalItems("up", ctx), d.defaultBatchSize),
          canRun: await d.canRun(ctx),
          isApplicable,
          status: isApplicable ? (latest.get(d.id) ?? "pending") : "not-applicable",
        };
      }),
    );
  }

  /** Schedules a run (`up`) or rollback (`down`) of batches `from`–`to` in the background. */
  async schedule(id: string, operation: Operation, params: ScheduleParams): Promise<ScheduleResult> {
    const definition = this.#definition(id);
    const batchSize = positiveInteger("batch-size", params.batchSize) ?? definition.defaultBatchSize;
    if (batchSize > MAX_BATCH_SIZE) {
      throw new InvalidArgumentError(`Invalid parameter batch-size: must be at most ${MAX_BATCH_SIZE}.`);
    }
    const requestedFrom = positiveInteger("from-batch", params.fromBatch);
    const requestedTo = positiveInteger("to-batch", params.toBatch);
    const ctx = this.#context();
    if (!(await definition.isApplicable(ctx)))
      throw new InvalidArgumentError(`Migration ${id} is not applicable.`);
    if (!(await definition.canRun(ctx)))
      throw new InvalidArgumentError(`Migration ${id} cannot run right now.`);
    if (operation === "down" && definition.down === undefined) {
      throw new InvalidArgumentError(`Migration ${id} cannot be rolled back.`);
    }
    const totalItems = await definition.totalItems(operation, ctx);
    const totalBatches = batchCount(totalItems, batchSize);
    const fromBatch = requestedFrom ?? 1;
    const toBatch = requestedTo ?? totalBatches;
    if (fromBatch > toBatch) {
      throw new InvalidArgumentError(
        `Invalid parameter from-batch: must not be greater than to-batch (${toBatch}).`,
      );
    }
    if (toBatch > totalBatches) {
      throw new InvalidArgumentError(
        `Invalid parameter to-batch: must not be greater than the number of batches (${totalBatches}).`,
      );
    }
    if (operation === "down") await this.#refuseRollbackOfReverted(id);
    const itemsTotal = Math.max(0, Math.min(totalItems, toBatch * batchSize) - (fromBatch - 1) * batchSize);
    const message =
      operation === "up" ? "Migration scheduled for execution." : "Rollback scheduled for execution.";
    const executionId = await this.#insert(
      id,
      operation,
      { fromBatch, toBatch, batchSize, itemsTotal },
      message,
    );
    this.#options.onScheduled();
    return { message, executionId, operation, fromBatch, toBatch, batchSize };
  }

  /** A migration's executions, id ascending. */
  async executions(id: string): Promise<ExecutionRecord[]> {
    this.#definition(id);
    return this.#options.store.executionsOf(id);
  }

  /**
   * An execution's logs. `executionId` as the request named it: text (a path segment) that is not a
   * positive integer names no execution, and the 404 message repeats it.
   */
  async logs(executionId: number | string, query: LogQuery): Promise<LogRecord[]> {
    const { store } = this.#options;
    const id = typeof executionId === "number" ? executionId : executionIdOf(executionId);
    const execution = id === undefined ? undefined : await store.execution(store.db, id);
    if (execution === undefined) throw new NotFoundError(`Execution with ID ${executionId} not found.`);
    return store.logs(execution.id, query);
  }

  /** One execution, for progress polling (the admin CLI). */
  async execution(executionId: number): Promise<ExecutionRecord | undefined> {
    const { store } = this.#options;
    return store.execution(store.db, executionId);
  }

  /**
   * A migration whose latest execution is `reverted` (a manual or automatic rollback) has nothing of its own
   * left to undo: another rollback would only end `reverted` again with nothing processed. Refused (409)
   * until a run comes first. Checked apart from the insert: a run scheduled in between would only make the
   * refusal stale, and two rollbacks at once are already one too many for the unique index.
   */
  async #refuseRollbackOfReverted(id: string): Promise<void> {
    const { store } = this.#options;
    const latest = await store.latestExecution(store.db, id);
    if (latest?.status !== "reverted") return;
    throw new ConflictError(
      `Migration ${id} is already rolled back (execution ${latest.id} reverted); run it again before another rollback.`,
    );
  }

  #definition(id: string) {
    const definition = this.#options.registry.get(id);
    if (definition === undefined) throw new NotFoundError(`Migration with ID ${id} not found.`);
    return definition;
  }

  #context(): MigrationContext {
    const { db } = this.#options.store;
    return { db, dialect: db.dialect };
  }

  async #insert(
    id: string,
    operation: Operation,
    range: Pick<ExecutionRecord, "fromBatch" | "toBatch" | "batchSize" | "itemsTotal">,
    message: string,
  ): Promise<number> {
    const { store } = this.#options;
    const now = this.#nowMs();
    try {
      return await store.db.transaction(async (tx) => {
        const executionId = await store.insertExecution(tx, {
          migrationId: id,
          operation,
          parentExecutionId: null,
          ...range,
          createdAtMs: now,
        });
        await store.insertJob(tx, executionId, range.fromBatch, now, now);
        await store.insertLogs(tx, executionId, [
          {
            type: "info",
            message,
            data: { from_batch: range.fromBatch, to_batch: range.toBatch, batch_size: range.batchSize },
            createdAtMs: now,
          },
        ]);
        return executionId;
      });
    } catch (error) {
      if (error instanceof DatabaseError && error.uniqueViolation) {
        throw new ConflictError(`Migration ${id} already has an execution scheduled or running.`);
      }
      throw error;
    }
  }
}

/** The execution id a text names: a positive safe integer, else undefined. */
function executionIdOf(text: string): number | undefined {
  const id = /^[1-9]\d{0,15}$/.test(text) ? Number(text) : Number.NaN;
  return Number.isSafeInteger(id) ? id : undefined;
}

/** A parameter that must be an integer ≥ 1: a JSON number or a numeric string; undefined when absent. */
function positiveInteger(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const number = typeof value === "string" && /^\s*\d{1,16}\s*$/.test(value) ? Number(value) : value;
  if (typeof number === "number" && Number.isSafeInteger(number) && number >= 1) return number;
  throw new InvalidArgumentError(`Invalid parameter ${name}: must be an integer greater than or equal to 1.`);
}
