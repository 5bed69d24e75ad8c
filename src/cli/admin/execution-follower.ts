import type { SqlDatabase } from "../../database/sql-database.js";
import { messageOf, NotFoundError } from "../../errors.js";
import type { ExecutionStatus } from "../../migrations/migration.js";
import type { ExecutionRecord, JobRecord } from "../../migrations/migration-records.js";
import { MigrationWorker } from "../../migrations/migration-worker.js";
import type { AdminContext } from "./admin-context.js";
import type { ExecutionProgress, ProgressDisplay } from "./progress-display.js";
import { ReportingBatchRunner } from "./reporting-batch-runner.js";

/** Options of {@link ExecutionFollower}. */
export interface ExecutionFollowerOptions {
  readonly ctx: AdminContext;
  readonly display: ProgressDisplay;
  /** Aborted by Ctrl-C: `follow` returns undefined. */
  readonly signal: AbortSignal;
  /** How often to look at the execution besides after each local batch (other workers' batches). */
  readonly pollIntervalMs?: number;
}

const ENDED: ReadonlySet<ExecutionStatus> = new Set(["completed", "failed", "reverted"]);

/** What has been reported of the execution being followed. */
interface Followed {
  readonly id: number;
  readonly done: Set<number>;
  /** Failed attempts reported per batch. */
  readonly failures: Map<number, number>;
}

/**
 * Runs a migration worker in this process (its own lease owner, like one more daemon) and follows an
 * execution until it ends, showing its progress: after each batch this worker runs, and every
 * `pollIntervalMs` for batches another worker (a daemon) may run.
 */
export class ExecutionFollower {
  readonly #options: ExecutionFollowerOptions;
  readonly #worker: MigrationWorker;
  #followed: Followed | undefined;
  /**
   * Items processed as read right after this process's worker ran a batch of an execution not followed
   * yet (an automatic rollback's first batches, run before `follow` turns to it), by `execution:batch`: that
   * batch's line shows them, not the count of a later look.
   */
  readonly #itemsAfter = new Map<string, number>();
  /** Checks run one at a time, so progress never goes backwards. */
  #checks: Promise<unknown> = Promise.resolve();
  #wake: (() => void) | undefined;

  constructor(options: ExecutionFollowerOptions) {
    this.#options = options;
    const { migrationTimings: timings, migrationStore: store, registry } = options.ctx;
    const note = (line: string) => options.display.note(line);
    const runner = new ReportingBatchRunner(
      {
        store,
        registry,
        // A failed execution is reported from its own error log, whichever worker ran it.
        logger: { info: note, warn: note, error: () => undefined },
        retryBaseMs: timings.retryBaseMs,
        retryMaxMs: timings.retryMaxMs,
        nowMs: Date.now,
      },
      (job) => this.#afterJob(job),
    );
    this.#worker = new MigrationWorker({
      store,
      runner,
      logger: { info: note, warn: note, error: note },
      pollIntervalMs: timings.pollIntervalMs,
      leaseMs: timings.leaseMs,
      nowMs: Date.now,
    });
  }

  /** Starts the worker: it claims due jobs at once. */
  start(): void {
    this.#worker.start();
  }

  /** Stops the worker: the batch in progress gets `graceMs` to finish, then goes back to the queue. */
  stop(graceMs: number): Promise<void> {
    return this.#worker.stop(graceMs);
  }

  /** Shows the execution's progress until it ends (resolving with it) or Ctrl-C (resolving undefined). */
  async follow(executionId: number): Promise<ExecutionRecord | undefined> {
    const { signal, display, ctx } = this.#options;
    this.#followed = { id: executionId, done: new Set(), failures: new Map() };
    try {
      for (;;) {
        // Before looking: on SQLite a look waits for the batch in progress, which Ctrl-C is to release.
        if (signal.aborted) return undefined;
        const progress = await this.#check();
        if (progress !== undefined && ENDED.has(progress.status)) {
          const ended = await ctx.migrations.execution(executionId);
          if (ended === undefined) throw new NotFoundError(`Execution with ID ${executionId} not found.`);
          return ended;
        }
        await this.#sleep();
      }
    } finally {
      this.#followed = undefined;
      display.end();
    }
  }

  async #afterJob(job: JobRecord): Promise<void> {
    if (this.#followed?.id !== job.executionId) {
      try {
        const { progress } = await readProgress(this.#options.ctx.db, job.executionId);
        this.#itemsAfter.set(`${job.executionId}:${job.batch}`, progress.itemsProcessed);
      } catch {
        // Only a batch line's count is lost: it then shows the count of the first look after it.
      }
      return;
    }
    try {
      await this.#check();
    } catch (error) {
      // The follow loop's next look reports the same failure; the worker must go on regardless.
      this.#options.display.note(
        `cannot read the progress of execution ${job.executionId}: ${messageOf(error)}`,
      );
    }
    this.#wake?.();
  }

  #check(): Promise<ExecutionProgress | undefined> {
    const checked = this.#checks.then(async () => {
      const followed = this.#followed;
      if (followed === undefined) return undefined;
      const snapshot = await readProgress(this.#options.ctx.db, followed.id);
      this.#report(followed, snapshot);
      return snapshot.progress;
    });
    this.#checks = checked.catch(() => undefined);
    return checked;
  }

  #report(followed: Followed, { progress, retries }: ProgressSnapshot): void {
    const { display } = this.#options;
    for (const batch of progress.batchesDone) {
      if (followed.done.has(batch)) continue;
      followed.done.add(batch);
      const itemsProcessed = this.#itemsAfter.get(`${followed.id}:${batch}`);
      display.batchDone(itemsProcessed === undefined ? progress : { ...progress, itemsProcessed }, batch);
    }
    for (const retry of retries) {
      if ((followed.failures.get(retry.batch) ?? 0) >= retry.failures) continue;
      followed.failures.set(retry.batch, retry.failures);
      const seconds = Math.max(0, Math.round((retry.runAtMs - Date.now()) / 1000));
      display.note(
        `execution ${progress.executionId}: batch ${retry.batch}/${progress.toBatch} failed (attempt ${retry.failures}), retrying in ${seconds} s`,
      );
    }
    display.update(progress);
  }

  #sleep(): Promise<void> {
    const { signal, pollIntervalMs = 500 } = this.#options;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, pollIntervalMs);
      signal.addEventListener("abort", done, { once: true });
      this.#wake = done;
    });
  }
}

/** An execution's progress and its batches waiting for a retry. */
interface ProgressSnapshot {
  readonly progress: ExecutionProgress;
  readonly retries: readonly { batch: number; failures: number; runAtMs: number }[];
}

/**
 * Reads the execution with its batch jobs in one statement (one snapshot, so the items count always
 * matches the batches done). The migration service has no per-batch view, hence this read-only look at
 * the scheduler's job rows (`migrations-schema.ts`): state `done`, or `pending` after failed attempts.
 */
async function readProgress(db: SqlDatabase, executionId: number): Promise<ProgressSnapshot> {
  const found = await db.query<Record<string, unknown>>(
    `SELECT e.status, e.items_processed, e.items_total, e.from_batch, e.to_batch,
            j.batch, j.state, j.attempt, j.run_at_ms
     FROM migration_executions e LEFT JOIN migration_jobs j ON j.execution_id = e.id
     WHERE e.id = $1 ORDER BY j.batch`,
    [executionId],
  );
  const first = found.rows[0];
  if (first === undefined) throw new NotFoundError(`Execution with ID ${executionId} not found.`);
  const jobs = found.rows.filter((row) => row.batch !== null);
  return {
    progress: {
      executionId,
      status: first.status as ExecutionStatus,
      itemsProcessed: Number(first.items_processed),
      itemsTotal: Number(first.items_total),
      fromBatch: Number(first.from_batch),
      toBatch: Number(first.to_batch),
      batchesDone: jobs.filter((row) => row.state === "done").map((row) => Number(row.batch)),
    },
    retries: jobs
      .filter((row) => row.state === "pending" && Number(row.attempt) > 0)
      .map((row) => ({
        batch: Number(row.batch),
        failures: Number(row.attempt),
        runAtMs: Number(row.run_at_ms),
      })),
  };
}
