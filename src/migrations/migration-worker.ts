import { randomUUID } from "node:crypto";
import { messageOf } from "../errors.js";
import type { Logger } from "../observability/logger.js";
import type { BatchRunner } from "./batch-runner.js";
import type { SqlMigrationStore } from "./sql-migration-store.js";

/**
 * How a migration worker paces itself (MIGRATIONS_RETRY_BASE, MIGRATIONS_RETRY_MAX,
 * MIGRATIONS_POLL_INTERVAL, MIGRATIONS_JOB_LEASE): the daemon's worker and `ratelimitd-admin migrations run`
 * use the same ones.
 */
export interface MigrationTimings {
  /** Retry backoff of a failed batch: base × 2^(failures − 1), capped at `retryMaxMs`. */
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  /** How often to look for due jobs. */
  readonly pollIntervalMs: number;
  /** How long a claimed job stays the worker's without renewal. */
  readonly leaseMs: number;
}

/** Options of {@link MigrationWorker}. */
export interface MigrationWorkerOptions {
  readonly store: SqlMigrationStore;
  readonly runner: BatchRunner;
  readonly logger: Pick<Logger, "warn" | "error" | "info">;
  /** How often to look for due jobs (other replicas' work, retries). */
  readonly pollIntervalMs: number;
  /** How long a claimed job stays ours without renewal; renewed every third of it while a batch runs. */
  readonly leaseMs: number;
  readonly nowMs: () => number;
}

/**
 * The background worker: claims one due batch job at a time (a lease on the job row), runs it, and
 * claims the next at once; polls while idle. Stopping finishes the current batch within a grace period,
 * else aborts it, and the job goes back to the queue.
 */
export class MigrationWorker {
  /** This worker's identity in `lease_owner`. */
  readonly owner = `worker-${randomUUID()}`;
  readonly #options: MigrationWorkerOptions;
  #timer: NodeJS.Timeout | undefined;
  #current: Promise<void> | undefined;
  #abort: AbortController | undefined;
  #stopped = true;
  #wakeRequested = false;
  #failing = false;

  constructor(options: MigrationWorkerOptions) {
    this.#options = options;
  }

  start(): void {
    this.#stopped = false;
    this.wake();
  }

  /** Looks for work now (a run was just scheduled here). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#current !== undefined) {
      this.#wakeRequested = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#current = this.#work().finally(() => {
      this.#current = undefined;
      if (this.#stopped) return;
      if (this.#wakeRequested) {
        this.#wakeRequested = false;
        this.wake();
      } else this.#timer = setTimeout(() => this.wake(), this.#options.pollIntervalMs);
    });
  }

  /** Waits up to `graceMs` for the batch in progress, then aborts it; resolves when nothing runs. */
  async stop(graceMs: number): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    const current = this.#current;
    if (current === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([current, graceOver]);
    clearTimeout(timer);
    this.#abort?.abort(new Error("the daemon is shutting down"));
    await current;
  }

  /** Runs due jobs until there are none (or the worker stops). */
  async #work(): Promise<void> {
    const { store, runner, leaseMs, nowMs, logger } = this.#options;
    while (!this.#stopped) {
      let job: Awaited<ReturnType<SqlMigrationStore["claimJob"]>>;
      try {
        job = await store.claimJob(this.owner, nowMs(), nowMs() + leaseMs);
      } catch (error) {
        // Once per outage, not once per poll.
        if (!this.#failing) logger.warn(`migrations: cannot look for jobs: ${messageOf(error)}`);
        this.#failing = true;
        return;
      }
      if (this.#failing) logger.info("migrations: the job queue is reachable again");
      this.#failing = false;
      if (job === undefined) return;
      const abort = new AbortController();
      this.#abort = abort;
      const claimed = job;
      const heartbeat = setInterval(
        () => {
          store
            .renewLease(claimed.id, this.owner, nowMs() + leaseMs)
            .then((held) => {
              if (!held) abort.abort(new Error("the job's lease was lost"));
            })
            .catch((error: unknown) => logger.warn(`migrations: cannot renew a lease: ${messageOf(error)}`));
        },
        Math.max(10, Math.floor(leaseMs / 3)),
      );
      try {
        await runner.run(job, this.owner, abort.signal);
      } catch (error) {
        // Recording the outcome failed (database unreachable): the lease expires and the job runs again.
        logger.error(`migrations: batch ${job.batch} of execution ${job.executionId}: ${messageOf(error)}`);
      } finally {
        clearInterval(heartbeat);
        this.#abort = undefined;
      }
    }
  }
}
