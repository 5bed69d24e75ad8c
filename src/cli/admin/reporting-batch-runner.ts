import { BatchRunner, type BatchRunnerOptions } from "../../migrations/batch-runner.js";
import type { JobRecord } from "../../migrations/migration-records.js";

/**
 * The daemon's batch runner, telling the admin CLI when each job it ran has been recorded. The worker
 * claims its next job only once `afterRun` resolves, so the CLI reports every local batch before the
 * next one starts: one progress line per batch, never two batches merged into one.
 */
export class ReportingBatchRunner extends BatchRunner {
  readonly #afterRun: (job: JobRecord) => Promise<void>;

  constructor(options: BatchRunnerOptions, afterRun: (job: JobRecord) => Promise<void>) {
    super(options);
    this.#afterRun = afterRun;
  }

  override async run(job: JobRecord, owner: string, signal: AbortSignal): Promise<void> {
    try {
      await super.run(job, owner, signal);
    } finally {
      await this.#afterRun(job);
    }
  }
}
