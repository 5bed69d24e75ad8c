import { MessageChannel, Worker } from "node:worker_threads";
import { releaseLocksHeldBy } from "../../backends/memory/shared-memory-store.js";
import type { RuleDocument } from "../../config/rule-document.js";
import { serveRelayedDatabase } from "../../database/relayed-database.js";
import type { SqlDatabase } from "../../database/sql-database.js";
import { StatsAbsorber } from "../../observability/forwarded-stats.js";
import type { Logger } from "../../observability/logger.js";
import type { StatCounter } from "../../observability/stat-metrics.js";
import type { StatsRegistry } from "../../observability/stats-registry.js";
import { workerEntry } from "../../worker-entry.js";
import {
  type DecisionThreadData,
  type FromWorker,
  type ToWorker,
  WORKER_REQUESTS,
} from "./worker-messages.js";

/** Options of {@link WorkerPool}. */
export interface WorkerPoolOptions {
  readonly count: number;
  /** The environment the settings came from, when the embedder gave it (else the process's). */
  readonly env: Readonly<Record<string, string | undefined>> | undefined;
  readonly ports: { readonly grpc: number; readonly http: number };
  readonly table: SharedArrayBuffer | undefined;
  /** BACKEND_FAILURE_MODE=local's shared counter table. */
  readonly localTable: SharedArrayBuffer | undefined;
  /** The failed-login throttle's shared counter table. */
  readonly authTable: SharedArrayBuffer;
  readonly database: SqlDatabase;
  readonly logger: Logger;
  readonly stats: StatsRegistry;
  /** A worker scheduled a migration: wake the main thread's migration worker. */
  readonly wakeMigrations: () => void;
}

/** A worker thread that ended unexpectedly is started again after this, doubling while it keeps failing. */
const RESTART_DELAY_MS = 100;
const RESTART_DELAY_MAX_MS = 10_000;
/** A worker that lived longer than this before dying resets the delay. */
const HEALTHY_LIFETIME_MS = 10_000;

/** One slot of the pool: the thread serving it now, and how it has fared. */
interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  startedAtMs: number;
  restartDelayMs: number;
  replacements: number;
  readonly requests: StatCounter;
}

/** What `GET /workers` on the debug port shows for each worker. */
export interface WorkerStatus {
  readonly index: number;
  readonly threadId: number | null;
  readonly requests: number;
  readonly replacements: number;
}

/**
 * The worker threads of WORKERS > 1, from the main thread (docs/workers.md): starts them (the first one
 * alone, so that a port 0 setting becomes one port all share), relays rule sets and the database, adds
 * their stats to the process's registry, replaces a worker that ends unexpectedly, and drains them all at
 * stop.
 */
export class WorkerPool {
  readonly #options: WorkerPoolOptions;
  readonly #slots: Slot[] = [];
  readonly #absorber: StatsAbsorber;
  #ports: { grpc: number; http: number };
  #rules: readonly RuleDocument[] | undefined;
  #stopping = false;

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
    this.#ports = { ...options.ports };
    this.#absorber = new StatsAbsorber(options.stats);
    for (let index = 1; index <= options.count; index++) {
      this.#slots.push({
        index,
        worker: undefined,
        startedAtMs: 0,
        restartDelayMs: RESTART_DELAY_MS,
        replacements: 0,
        requests: options.stats.counter(WORKER_REQUESTS, { worker: String(index) }),
      });
    }
  }

  /** Starts every worker; resolves with the shared ports once all of them listen. */
  async start(): Promise<{ grpc: number; http: number }> {
    const [first, ...others] = this.#slots;
    this.#ports = await this.#spawn(first!);
    await Promise.all(others.map((slot) => this.#spawn(slot)));
    return this.#ports;
  }

  /** A rule set the main thread compiled: every worker compiles and swaps in the same documents. */
  relayRules(documents: readonly RuleDocument[]): void {
    this.#rules = documents;
    this.#broadcast({ type: "rules", documents });
  }

  /** SIGTERM: every worker fails its health checks at once. */
  unhealthy(): void {
    this.#broadcast({ type: "unhealthy" });
  }

  /** Each worker's requests and replacements (balance, `GET /workers`). */
  status(): WorkerStatus[] {
    return this.#slots.map((slot) => ({
      index: slot.index,
      threadId: slot.worker?.threadId ?? null,
      requests: slot.requests.value,
      replacements: slot.replacements,
    }));
  }

  /** Ends worker `index` as a crash would (it is replaced); false when there is no such worker. */
  async terminate(index: number): Promise<boolean> {
    const worker = this.#slots[index - 1]?.worker;
    if (worker === undefined) return false;
    await worker.terminate();
    return true;
  }

  /** Every worker drains its ports within `graceMs` and ends; resolves once all have. */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      this.#slots.map(async (slot) => {
        const worker = slot.worker;
        if (worker === undefined) return;
        const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
        worker.postMessage({ type: "stop", graceMs } satisfies ToWorker);
        // A worker that does not end on its own after the grace period (and a little more) is ended.
        const timer = setTimeout(() => void worker.terminate(), graceMs + 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  #broadcast(message: ToWorker): void {
    for (const slot of this.#slots) slot.worker?.postMessage(message);
  }

  /** Starts `slot`'s thread; resolves with its ports once it listens, rejects if it cannot start. */
  #spawn(slot: Slot): Promise<{ grpc: number; http: number }> {
    const options = this.#options;
    const channel = new MessageChannel();
    serveRelayedDatabase(options.database, channel.port1);
    const data: DecisionThreadData = {
      index: slot.index,
      env: options.env,
      ports: this.#ports,
      table: options.table,
      localTable: options.localTable,
      authTable: options.authTable,
      database: channel.port2,
      dialect: options.database.dialect,
      rules: this.#rules,
    };
    const worker = new Worker(workerEntry("decision-thread-entry", import.meta.url), {
      workerData: data,
      transferList: [channel.port2],
    });
    slot.worker = worker;
    slot.startedAtMs = Date.now();
    let listening = false;
    return new Promise((resolve, reject) => {
      worker.on("message", (message: FromWorker) => {
        switch (message.type) {
          case "listening":
            listening = true;
            resolve({ grpc: message.grpc, http: message.http });
            return;
          case "failed":
            reject(new Error(`worker ${slot.index} could not start: ${message.message}`));
            void worker.terminate();
            return;
          case "stats":
            this.#absorber.absorb(slot.index, message.stats);
            return;
          case "wake-migrations":
            options.wakeMigrations();
            return;
          case "stopped":
            return;
        }
      });
      worker.on("error", (error) => {
        options.logger.error(
          `worker ${slot.index} (thread ${worker.threadId}) failed: ${error.stack ?? error.message}`,
        );
      });
      const thread = worker.threadId;
      worker.on("exit", (code) => {
        channel.port1.close();
        // A worker ended from outside may have been inside a counter's critical section.
        for (const table of [options.table, options.localTable, options.authTable]) {
          if (table !== undefined) releaseLocksHeldBy(table, thread);
        }
        this.#absorber.forget(slot.index);
        if (slot.worker === worker) slot.worker = undefined;
        if (!listening) {
          reject(new Error(`worker ${slot.index} ended with code ${code} before it listened`));
          return;
        }
        if (this.#stopping) return;
        this.#replace(slot, code);
      });
    });
  }

  /** Logs the end of `slot`'s thread and starts another in its place, after a delay while it keeps dying. */
  #replace(slot: Slot, code: number): void {
    const lived = Date.now() - slot.startedAtMs;
    slot.restartDelayMs = lived > HEALTHY_LIFETIME_MS ? RESTART_DELAY_MS : slot.restartDelayMs;
    const delay = slot.restartDelayMs;
    slot.restartDelayMs = Math.min(delay * 2, RESTART_DELAY_MAX_MS);
    this.#options.logger.error(
      `worker ${slot.index} ended unexpectedly (exit code ${code}) after ${Math.round(lived / 1000)} s; starting a new one in ${delay} ms, the other workers keep serving`,
    );
    setTimeout(() => {
      if (this.#stopping) return;
      slot.replacements++;
      this.#spawn(slot).then(
        () => this.#options.logger.warn(`worker ${slot.index} replaced (thread ${slot.worker?.threadId})`),
        (error: unknown) => {
          this.#options.logger.error((error as Error).message);
          if (!this.#stopping) this.#replace(slot, 1);
        },
      );
    }, delay).unref();
  }
}
