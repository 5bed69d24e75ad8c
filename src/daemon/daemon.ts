import type { CounterStore } from "../engine/counter-store.js";
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

export type { BoundAddresses } from "./listeners.js";

/** Test and embedding hooks; production uses the defaults. */
export interface DaemonOverrides {
  readonly logger?: Logger;
  readonly store?: CounterStore;
  readonly nowMs?: () => number;
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
    const { store, nowMs } = overrides;
    this.#rateLimit = new RateLimitSide({ settings, observability, health, store, nowMs });
    this.service = this.#rateLimit.service;
    this.management = new ManagementApis(settings, logger, stats);
    this.#console = settings.consoleEnabled
      ? new OperatorConsole({
          settings,
          stats,
          health,
          service: this.service,
          storeStatus: this.#rateLimit.storeStatus,
          loadCounts: this.#rateLimit.loadCounts,
          database: () => ({
            database: this.management.database.dialect,
            ready: this.management.database.ready,
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
    });
  }

  /** Starts everything; resolves once all listeners accept connections. */
  async start(): Promise<BoundAddresses> {
    for (const warning of this.settings.warnings) this.logger.warn(warning);
    await this.#rateLimit.start();
    // The users/migrations database: a failure here is logged and retried in the background; rate
    // limiting does not depend on it.
    await this.management.start();
    await this.#observability.start();
    this.#console?.start();
    return this.#listeners.listen();
  }

  /** Graceful stop: listeners stop accepting, in-flight requests finish, then everything closes. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.logger.warn("shutting down");
      const graceMs = this.settings.shutdownGraceMs;
      // Live pages never hang up by themselves: end their streams so the listeners can close.
      this.#console?.close();
      await this.#listeners.close(graceMs);
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
