import type { AccessGuard } from "../auth/authenticator.js";
import { loadConsoleBundle } from "../console/console-assets.js";
import type { Overview, StoreStatus } from "../console/console-contract.js";
import { consoleRoute } from "../console/console-route.js";
import { readDaemonVersion } from "../console/daemon-version.js";
import { LiveStream } from "../console/live-stream.js";
import { type OverviewSources, overviewJson } from "../console/overview-json.js";
import { rulesJson } from "../console/rules-json.js";
import { TrafficSampler } from "../console/traffic-sampler.js";
import type { Logger } from "../observability/logger.js";
import type { StatsRegistry } from "../observability/stats-registry.js";
import type { HealthChecker } from "../service/health-checker.js";
import type { RateLimitService } from "../service/rate-limit-service.js";
import type { Settings } from "../settings/load-settings.js";
import type { HttpRoute } from "../transports/http/http-route.js";

/** What the console shows and whom it lets in. */
export interface OperatorConsoleParts {
  readonly settings: Settings;
  readonly stats: StatsRegistry;
  readonly health: HealthChecker;
  readonly service: RateLimitService;
  readonly storeStatus: () => StoreStatus;
  /** Rule loads so far (the service's `config_load_success` and `config_load_error`). */
  readonly loadCounts: () => { readonly successes: number; readonly errors: number };
  readonly database: () => Overview["management"];
  readonly guard: AccessGuard;
  readonly managementRoutes: readonly HttpRoute[];
  readonly logger: Pick<Logger, "error">;
  readonly nowMs?: () => number;
}

/** A second's sampling; ten minutes of history for a page opened later. */
const INTERVAL_MS = 1000;
const HISTORY_LENGTH = 600;
const MAX_LIVE_PAGES = 32;
/** Descriptors in one Rules answer; beyond, the page searches (`?q=`). */
const MAX_RULE_NODES = 2000;

/**
 * The operator console (CONSOLE_ENABLED, on the debug port; docs/console.md): its route, and the
 * sampler that turns the stats the daemon keeps anyway into the live stream, once a second.
 */
export class OperatorConsole {
  readonly route: HttpRoute;
  readonly #live: LiveStream;

  constructor(parts: OperatorConsoleParts) {
    const { settings, stats, health, service } = parts;
    const nowMs = parts.nowMs ?? Date.now;
    const sampler = new TrafficSampler({
      stats,
      rules: () => service.rules,
      status: () => ({ healthy: health.healthy, breaker: parts.storeStatus().breaker }),
      nowMs,
      historyLength: HISTORY_LENGTH,
      maxRulesPerTick: MAX_RULE_NODES,
    });
    this.#live = new LiveStream({
      sampler,
      intervalMs: INTERVAL_MS,
      maxClients: MAX_LIVE_PAGES,
      lastLoad: () => service.lastLoad,
    });
    const startedAtMs = nowMs();
    const version = readDaemonVersion();
    this.route = consoleRoute({
      bundle: loadConsoleBundle(),
      overview: () =>
        overviewJson({
          version,
          startedAtMs,
          nowMs,
          health: () => ({ healthy: health.healthy, components: health.states() }),
          store: parts.storeStatus,
          rules: () => service.rules,
          lastLoad: () => service.lastLoad,
          loadCounts: parts.loadCounts,
          ruleSource: ruleSourceOf(settings),
          database: parts.database,
          sinks: {
            statsd: settings.useStatsd && !settings.disableStats,
            dogstatsd: settings.useDogStatsd && !settings.disableStats,
            prometheus: settings.usePrometheus && !settings.disableStats,
            tracing: settings.tracingEnabled,
          },
        }),
      rules: (query) =>
        rulesJson(service.rules, (ruleStats) => stats.ruleCounts(ruleStats), {
          query,
          maxNodes: MAX_RULE_NODES,
        }),
      live: this.#live,
      guard: parts.guard,
      management: parts.managementRoutes,
      logError: (line) => parts.logger.error(line),
    });
  }

  /** Starts sampling (the live stream's history begins now). */
  start(): void {
    this.#live.start();
  }

  /** Ends the live streams and stops sampling. */
  close(): void {
    this.#live.close();
  }
}

function ruleSourceOf(settings: Settings): OverviewSources["ruleSource"] {
  if (settings.configType === "GRPC_XDS_SOTW") return { kind: "xds", location: settings.xdsServerUrl };
  const parts = [settings.runtimeRoot, settings.runtimeSubdirectory, settings.runtimeAppDirectory];
  return { kind: "file", location: parts.filter((part) => part !== "").join("/") };
}
