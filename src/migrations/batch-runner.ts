import { messageOf } from "../errors.js";
import type { Logger } from "../observability/logger.js";
import type { MigrationContext, MigrationDefinition, Operation } from "./migration.js";
import { batchCount } from "./migration.js";
import type { ExecutionRecord, JobRecord, NewLog } from "./migration-records.js";
import type { MigrationRegistry } from "./migration-registry.js";
import { retryDelayMs } from "./retry-backoff.js";
import type { SqlMigrationStore } from "./sql-migration-store.js";

/** Options of {@link BatchRunner}. */
export interface BatchRunnerOptions {
  readonly store: SqlMigrationStore;
  readonly registry: MigrationRegistry;
  readonly logger: Pick<Logger, "warn" | "error" | "info">;
  /** Retry backoff: base × 2^(failures − 1), capped (MIGRATIONS_RETRY_BASE, MIGRATIONS_RETRY_MAX: 30 s and 6 h by default). */
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly nowMs: () => number;
}

/** The job could not be recorded as ours: another worker took it over after our lease expired. */
class LeaseLost extends Error {}

const DONE_STATUS: Record<Operation, "completed" | "reverted"> = { up: "completed", down: "reverted" };
const DONE_MESSAGE: Record<Operation, string> = { up: "Migration completed.", down: "Rollback completed." };

/**
 * Runs one claimed batch job to its end: the batch's own work, its logs, the progress counters and the
 * next job (or the execution's end) commit together in one transaction. A failure is retried with
 * backoff, then fails the execution and, after a failed `up`, schedules the automatic rollback.
 */
export class BatchRunner {
  constructor(private readonly options: BatchRunnerOptions) {}

  /** Runs `job` held by `owner`. Resolves when it is recorded (done, requeued, failed or released). */
  async run(job: JobRecord, owner: string, signal: AbortSignal): Promise<void> {
    const { store } = this.options;
    const execution = await store.execution(store.db, job.executionId);
    if (execution === undefined || !["scheduled", "running"].includes(execution.status)) {
      await store.db.transaction((tx) => store.endJob(tx, job.id, owner, "done", this.options.nowMs()));
      return;
    }
    const definition = this.options.registry.get(execution.migrationId);
    if (definition === undefined) {
      return this.#fail(
        job,
        owner,
        execution,
        undefined,
        [],
        `Migration ${execution.migrationId} is not registered in this daemon.`,
      );
    }
    const ctx: MigrationContext = { db: store.db, dialect: store.db.dialect };
    await store.markRunning(execution.id, this.options.nowMs());
    if (await definition.isDone(execution.operation, ctx)) {
      await store.db.transaction(async (tx) => {
        await this.#finish(tx, execution, "Nothing left to do.");
        if (!(await store.endJob(tx, job.id, owner, "done", this.options.nowMs()))) throw new LeaseLost();
      });
      return;
    }
    const logs: NewLog[] = [];
    try {
      await this.#runBatch(job, owner, execution, definition, logs, signal);
    } catch (error) {
      if (error instanceof LeaseLost) {
        this.options.logger.warn(
          `migrations: lost the lease of job ${job.id} (batch ${job.batch}); another worker has it`,
        );
      } else if (signal.aborted) {
        await store.requeueJob(store.db, job.id, owner, this.options.nowMs(), false);
        this.options.logger.info(
          `migrations: batch ${job.batch} of execution ${execution.id} released at shutdown`,
        );
      } else {
        await this.#failBatch(job, owner, execution, definition, logs, error);
      }
    }
  }

  async #runBatch(
    job: JobRecord,
    owner: string,
    execution: ExecutionRecord,
    definition: MigrationDefinition,
    logs: NewLog[],
    signal: AbortSignal,
  ): Promise<void> {
    const { store, nowMs } = this.options;
    const { operation, batchSize } = execution;
    const step = operation === "up" ? definition.up : definition.down;
    if (step === undefined) throw new Error(`Migration ${definition.id} has no down step.`);
    await store.db.transaction(async (tx) => {
      const log = (type: NewLog["type"], message: string, data: Record<string, unknown> = {}) =>
        logs.push({ type, message, data, createdAtMs: nowMs() });
      const processed = await step.call(definition, job.batch, batchSize, {
        db: tx,
        dialect: store.db.dialect,
        executionId: execution.id,
        log,
        signal,
      });
      if (!Number.isSafeInteger(processed) || processed < 0) {
        throw new Error(`batch ${job.batch} returned ${String(processed)} instead of a number of items`);
      }
      await store.addProcessed(tx, execution.id, processed);
      log("info", `Batch ${job.batch} of ${execution.toBatch} processed: ${processed} items.`, {
        batch: job.batch,
        items: processed,
      });
      const last =
        job.batch >= execution.toBatch ||
        (await definition.isDone(operation, { db: tx, dialect: store.db.dialect }));
      await store.insertLogs(tx, execution.id, logs.splice(0));
      if (last) await this.#finish(tx, execution, DONE_MESSAGE[operation]);
      else await store.insertJob(tx, execution.id, job.batch + 1, nowMs(), nowMs());
      if (!(await store.endJob(tx, job.id, owner, "done", nowMs()))) throw new LeaseLost();
    });
  }

  async #failBatch(
    job: JobRecord,
    owner: string,
    execution: ExecutionRecord,
    definition: MigrationDefinition,
    logs: NewLog[],
    error: unknown,
  ): Promise<void> {
    const { store, nowMs } = this.options;
    const failures = job.failures + 1;
    const retries = definition.retriesPerBatch ?? 0;
    const reason = messageOf(error);
    if (failures <= retries) {
      const delayMs = retryDelayMs(failures, this.options.retryBaseMs, this.options.retryMaxMs);
      await store.db
        .transaction(async (tx) => {
          await store.insertLogs(tx, execution.id, [
            ...logs,
            {
              type: "warning",
              message: `Batch ${job.batch} failed (attempt ${failures} of ${retries + 1}): ${reason} Retrying in ${delayMs / 1000} s.`,
              data: { batch: job.batch, attempt: failures, error: reason, retry_in_seconds: delayMs / 1000 },
              createdAtMs: nowMs(),
            },
          ]);
          if (!(await store.requeueJob(tx, job.id, owner, nowMs() + delayMs, true))) throw new LeaseLost();
        })
        .catch((e) => this.#leaseLostIsFine(e));
      return;
    }
    await this.#fail(job, owner, execution, definition, logs, `Batch ${job.batch} failed: ${reason}`);
  }

  /** Fails the execution (and its job); after a failed `up` with something to undo, schedules the rollback. */
  async #fail(
    job: JobRecord,
    owner: string,
    execution: ExecutionRecord,
    definition: MigrationDefinition | undefined,
    logs: NewLog[],
    message: string,
  ): Promise<void> {
    const { store, nowMs } = this.options;
    const ctx: MigrationContext = { db: store.db, dialect: store.db.dialect };
    const downItems =
      definition?.down !== undefined && execution.operation === "up"
        ? await definition.totalItems("down", ctx)
        : 0;
    await store.db
      .transaction(async (tx) => {
        const failure: NewLog = { type: "error", message, data: { batch: job.batch }, createdAtMs: nowMs() };
        await store.insertLogs(tx, execution.id, [...logs, failure]);
        await store.finishExecution(tx, execution.id, "failed", nowMs());
        if (!(await store.endJob(tx, job.id, owner, "failed", nowMs()))) throw new LeaseLost();
        if (downItems <= 0) return;
        const child = await store.insertExecution(tx, {
          migrationId: execution.migrationId,
          operation: "down",
          parentExecutionId: execution.id,
          fromBatch: 1,
          toBatch: batchCount(downItems, execution.batchSize),
          batchSize: execution.batchSize,
          itemsTotal: downItems,
          createdAtMs: nowMs(),
        });
        await store.insertJob(tx, child, 1, nowMs(), nowMs());
        await store.insertLogs(tx, execution.id, [
          {
            type: "warning",
            message: "Automatic rollback scheduled.",
            data: { execution_id: child },
            createdAtMs: nowMs(),
          },
        ]);
        await store.insertLogs(tx, child, [
          {
            type: "info",
            message: `Automatic rollback of execution ${execution.id}.`,
            data: { parent_execution_id: execution.id },
            createdAtMs: nowMs(),
          },
        ]);
      })
      .catch((e) => this.#leaseLostIsFine(e));
    this.options.logger.error(
      `migrations: execution ${execution.id} (${execution.migrationId}) failed: ${message}`,
    );
  }

  async #finish(
    tx: import("../database/sql-database.js").SqlExecutor,
    execution: ExecutionRecord,
    message: string,
  ) {
    const { store, nowMs } = this.options;
    await store.insertLogs(tx, execution.id, [{ type: "info", message, data: {}, createdAtMs: nowMs() }]);
    await store.finishExecution(tx, execution.id, DONE_STATUS[execution.operation], nowMs());
  }

  #leaseLostIsFine(error: unknown): void {
    if (!(error instanceof LeaseLost)) throw error;
    this.options.logger.warn(
      "migrations: lost a job's lease while recording a failure; another worker has it",
    );
  }
}
