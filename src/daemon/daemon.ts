import { createSharedMemoryStore } from "../backends/memory/create-memory-store.js";
import { createSharedCounterTable } from "../backends/memory/shared-memory-store.js";
import type { CounterStore } from "../engine/counter-store.js";
import { SettingsError } from "../errors.js";
import type { Logger } from "../observability/logger.js";
import type { StatsRegistry } from "../observability/stats-registry.js";
import type { ThrottledLog } from "../observability/throttled-log.js";
import { HealthChecker } from "../service/health-checker.js";
import type { RateLimitService } from "../service/rate-limit-service.js";
import type { Settings } from "../settings/load-settings.js";
import { type BoundAddresses, Listeners } from "./listeners.js";
import { ManagementApis } from "./management-apis.js";
import { ObservabilitySide } from "./observability-side.js";
import { OperatorConsole } from "./operator-console.js";
import { RateLimitSide } from "./rate-limit-side.js";
import { probePortFree } from "./workers/port-probe.js";
import { type HostFacts, hostFacts, resolveWorkerCount } from "./workers/worker-count.js";
import { WorkerPool } from "./workers/worker-pool.js";

export type { BoundAddresses } from "./listeners.js";

/** The failed-login throttle's table with WORKERS > 1: 16 MiB, about 120,000 addresses in a minute. */
const AUTH_TABLE_BYTES = 16 * 1024 * 1024;

/** Test and embedding hooks; production uses the defaults. */
export interface DaemonOverrides {
  readonly logger?: Logger;
  readonly store?: CounterStore;
  readonly nowMs?: () => number;
  /** The host `WORKERS` is resolved on (default: this one). */
  readonly host?: HostFacts;
  /** The environment the settings came from, for the worker threads (default: the process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * ratelimitd: settings → observability → rate-limit side (store, engine, service, rule source) → management
 * APIs → listeners. `start()` follows the reference's order: the backend connects, the first rules load
 * (unless FORCE_START_WITHOUT_INITIAL_CONFIG), then the debug, gRPC and HTTP listeners open.
 */
export class Daemon {
  readonly logger: Logger;
  /** Recurring lines (backend failures, connections lost and back): at most one a second per kind. */
  readonly throttledLog: ThrottledLog;
  readonly stats: StatsRegistry;
  readonly health = new HealthChecker();
  readonly service: RateLimitService;
  /** The users and migrations APIs, their database and the migration worker. */
  readonly management: ManagementApis;
  readonly #observability: ObservabilitySide;
  readonly #rateLimit: RateLimitSide;
  readonly #listeners: Listeners;
  /** The operator console on the debug port (CONSOLE_ENABLED). */
  readonly #console: OperatorConsole | undefined;
  /** WORKERS > 1: the threads serving the gRPC and HTTP ports (docs/workers.md); undefined with one. */
  readonly #workers: WorkerPool | undefined;
  readonly #workersWarning: string | undefined;
  #stopping: Promise<void> | undefined;

  constructor(
    readonly settings: Settings,
    overrides: DaemonOverrides = {},
  ) {
    const observability = new ObservabilitySide(settings, overrides.logger);
    const { logger, stats, throttledLog } = observability;
    this.#observability = observability;
    this.logger = logger;
    this.throttledLog = throttledLog;
    this.stats = stats;
    const { health } = this;
    const { nowMs } = overrides;
    const workers = resolveWorkerCount(settings.workers, overrides.host ?? hostFacts());
    this.#workersWarning = workers.warning;
    if (workers.count > 1 && settings.grpcUds !== "") {
      throw new SettingsError([
        `WORKERS=${settings.workers} serves gRPC from ${workers.count} threads on one TCP port; a unix socket (GRPC_UDS) cannot be shared: unset GRPC_UDS or set WORKERS=1`,
      ]);
    }
    // The memory backend's counters, in memory every thread shares, so that N threads count as one.
    const table =
      workers.count > 1 && settings.backend === "memory" && overrides.store === undefined
        ? createSharedCounterTable(settings.memoryMaxBytes)
        : undefined;
    const store = table === undefined ? overrides.store : createSharedMemoryStore(table, observability, true);
    // Mode local's counters too: the replica, not each worker, allows its fraction of a limit.
    const localTable =
      workers.count > 1 && settings.backendFailureMode === "local"
        ? createSharedCounterTable(settings.memoryMaxBytes)
        : undefined;
    this.#rateLimit = new RateLimitSide({
      settings,
      observability,
      health,
      store,
      nowMs,
      localTable,
      onRulesCompiled: (documents) => this.#workers?.relayRules(documents),
    });
    this.service = this.#rateLimit.service;
    // The failed-login throttle's counters: one budget per address for the process, whichever worker.
    const authTable = workers.count > 1 ? createSharedCounterTable(AUTH_TABLE_BYTES) : undefined;
    this.management = new ManagementApis(settings, logger, stats, undefined, authTable);
    this.#workers =
      authTable !== undefined
        ? new WorkerPool({
            count: workers.count,
            env: overrides.env,
            ports: { grpc: settings.grpcPort, http: settings.port },
            table,
            localTable,
            authTable,
            database: this.management.database,
            logger,
            stats,
            wakeMigrations: () => this.management.wakeMigrationWorker(),
          })
        : undefined;
    this.#console = settings.consoleEnabled
      ? new OperatorConsole({
          settings,
          stats,
          health,
          service: this.service,
          storeStatus: this.#rateLimit.storeStatus,
          loadCounts: this.#rateLimit.loadCounts,
          database: () => ({
            database: this.management.databaseStatus.dialect,
            ready: this.management.databaseStatus.ready,
          }),
          guard: this.management.guard,
          managementRoutes: this.management.consoleRoutes,
          logger,
          ...(nowMs ? { nowMs } : {}),
        })
      : undefined;
    this.#listeners = new Listeners({
      settings,
      logger,
      throttledLog,
      stats,
      prometheus: observability.prometheus,
      service: this.service,
      health,
      requestLimits: this.#rateLimit.requestLimits,
      explainer: this.#rateLimit.explainer,
      management: this.management,
      console: this.#console?.route,
      workers:
        this.#workers === undefined
          ? undefined
          : { status: () => this.#workers?.status(), terminate: (index) => this.#workers!.terminate(index) },
    });
  }

  /** Starts everything; resolves once all listeners accept connections. */
  async start(): Promise<BoundAddresses> {
    for (const warning of this.settings.warnings) this.logger.warn(warning);
    if (this.#workersWarning !== undefined) this.logger.warn(this.#workersWarning);
    await this.#rateLimit.start();
    // The users/migrations database: a failure here is logged and retried in the background; rate
    // limiting does not depend on it.
    await this.management.start();
    await this.#observability.start();
    this.#console?.start();
    const workers = this.#workers;
    if (workers === undefined) return this.#listeners.listen();
    const bound = await this.#listeners.listen("owner");
    const { settings } = this;
    await probePortFree("GRPC_PORT", settings.grpcHost, settings.grpcPort);
    await probePortFree("PORT", settings.host, settings.port);
    const ports = await workers.start();
    this.logger.warn(
      `${this.settings.workers === "auto" ? "WORKERS=auto: " : ""}${workers.status().length} worker threads serve gRPC on '${this.settings.grpcHost}:${ports.grpc}' and HTTP on '${this.settings.host}:${ports.http}'`,
    );
    return { ...bound, http: ports.http, grpc: `${this.settings.grpcHost}:${ports.grpc}` };
  }

  /** SIGTERM: health checks fail at once, in every thread. */
  failHealthForSigterm(): void {
    this.health.set("sigterm", false);
    this.#workers?.unhealthy();
  }

  /** Graceful stop: listeners stop accepting, in-flight requests finish, then everything closes. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.logger.warn("shutting down");
      const graceMs = this.settings.shutdownGraceMs;
      // Live pages never hang up by themselves: end their streams so the listeners can close.
      this.#console?.close();
      await Promise.all([this.#listeners.close(graceMs), this.#workers?.stop(graceMs)]);
      await this.#observability.stopTracing();
      await this.#rateLimit.stopRuleSource();
      await this.#observability.stopFlushing();
      await this.#rateLimit.closeStore();
      await this.management.stop(graceMs);
      this.#observability.stopRuntimeStats();
      // Counts still held for the next second are written before the process ends.
      this.throttledLog.flush();
    })();
    return this.#stopping;
  }
}
