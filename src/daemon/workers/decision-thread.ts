import type { MessagePort } from "node:worker_threads";
import { createSharedMemoryStore } from "../../backends/memory/create-memory-store.js";
import { RelayedDatabase } from "../../database/relayed-database.js";
import type { CounterStore } from "../../engine/counter-store.js";
import { StatsReporter } from "../../observability/forwarded-stats.js";
import { HealthChecker } from "../../service/health-checker.js";
import type { Settings } from "../../settings/load-settings.js";
import { Listeners } from "../listeners.js";
import { ManagementApis } from "../management-apis.js";
import { ObservabilitySide } from "../observability-side.js";
import { RateLimitSide } from "../rate-limit-side.js";
import { RelayedRuleSource } from "./relayed-rule-source.js";
import {
  type DecisionThreadData,
  type FromWorker,
  type ToWorker,
  WORKER_REQUESTS,
} from "./worker-messages.js";

/** How often a worker reports its stats to the main thread. */
export const STATS_REPORT_INTERVAL_MS = 200;

/**
 * One worker thread of WORKERS > 1 (docs/workers.md): the rate-limit side (its own store connections, or
 * the shared memory table), the users and migrations APIs over the main thread's database, and the gRPC
 * and HTTP ports, shared with the other workers. Rules come from the main thread; stats go to it.
 */
export class DecisionThread {
  readonly health = new HealthChecker();
  readonly #data: DecisionThreadData;
  readonly #parent: MessagePort;
  readonly #observability: ObservabilitySide;
  readonly #rateLimit: RateLimitSide;
  readonly #management: ManagementApis;
  readonly #listeners: Listeners;
  readonly #rules: RelayedRuleSource[] = [];
  readonly #reporter: StatsReporter;
  #timer: NodeJS.Timeout | undefined;
  #stopping: Promise<void> | undefined;

  constructor(settings: Settings, data: DecisionThreadData, parent: MessagePort) {
    this.#data = data;
    this.#parent = parent;
    const observability = new ObservabilitySide(settings, undefined, true);
    this.#observability = observability;
    const { logger, stats } = observability;
    this.#reporter = new StatsReporter(stats);
    const store: CounterStore | undefined =
      data.table === undefined
        ? undefined
        : createSharedMemoryStore(
            data.table,
            { stats, logger, throttledLog: observability.throttledLog },
            false,
          );
    this.#rateLimit = new RateLimitSide({
      settings,
      observability,
      health: this.health,
      store,
      localTable: data.localTable,
      decisions: stats.counter(WORKER_REQUESTS, { worker: String(data.index) }),
      relayedRules: (compile) => {
        const source = new RelayedRuleSource(compile, data.rules);
        this.#rules.push(source);
        return source;
      },
    });
    this.#management = new ManagementApis(settings, logger, stats, {
      database: new RelayedDatabase(data.dialect, data.database),
      wakeMigrationWorker: () => this.#send({ type: "wake-migrations" }),
      authTable: data.authTable,
    });
    this.#listeners = new Listeners({
      settings,
      logger,
      throttledLog: observability.throttledLog,
      stats,
      prometheus: observability.prometheus,
      service: this.#rateLimit.service,
      health: this.health,
      requestLimits: this.#rateLimit.requestLimits,
      explainer: this.#rateLimit.explainer,
      management: this.#management,
      console: undefined,
    });
    parent.on("message", (message: ToWorker) => this.#receive(message));
  }

  /** Connects the store, takes the rules, opens the shared ports; tells the main thread which. */
  async start(): Promise<void> {
    await this.#rateLimit.start();
    await this.#management.start();
    await this.#observability.start();
    const bound = await this.#listeners.listen("decisions", this.#data.ports);
    this.#timer = setInterval(() => this.#report(), STATS_REPORT_INTERVAL_MS);
    this.#timer.unref();
    this.#send({
      type: "listening",
      grpc: Number(bound.grpc.slice(bound.grpc.lastIndexOf(":") + 1)),
      http: bound.http,
    });
  }

  /** Drains the ports, reports the last stats, closes everything; the thread can then end. */
  stop(graceMs: number): Promise<void> {
    this.#stopping ??= (async () => {
      clearInterval(this.#timer);
      await this.#listeners.close(graceMs);
      await this.#observability.stopTracing();
      for (const source of this.#rules) await source.stop();
      await this.#rateLimit.closeStore();
      this.#report();
      await this.#management.stop(graceMs);
      this.#observability.throttledLog.flush();
      this.#send({ type: "stopped" });
    })();
    return this.#stopping;
  }

  #receive(message: ToWorker): void {
    switch (message.type) {
      case "rules":
        for (const source of this.#rules) void source.update(message.documents);
        return;
      case "unhealthy":
        this.health.set("sigterm", false);
        return;
      case "stop":
        void this.stop(message.graceMs).then(() => this.#parent.close());
        return;
    }
  }

  #report(): void {
    this.#send({ type: "stats", stats: this.#reporter.take() });
  }

  #send(message: FromWorker): void {
    this.#parent.postMessage(message);
  }
}
