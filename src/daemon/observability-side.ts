import { Logger, logLevelFromSetting } from "../observability/logger.js";
import { PrometheusExporter } from "../observability/prometheus-exporter.js";
import { registerRuntimeStats } from "../observability/runtime-stats.js";
import { StatsFlusher } from "../observability/stats-flusher.js";
import { StatsRegistry } from "../observability/stats-registry.js";
import { ThrottledLog } from "../observability/throttled-log.js";
import type { Tracing } from "../observability/tracing.js";
import type { Settings } from "../settings/load-settings.js";
import { prometheusMapping } from "./prometheus-mapping-file.js";
import { statsSinks } from "./stats-sinks.js";

/**
 * The daemon's logging, stats and tracing: the logger (LOG_LEVEL, LOG_FORMAT), the throttled log of
 * recurring lines, the stats registry with the process's runtime gauges, the Prometheus exporter, the
 * flusher to statsd or DogStatsD, and OpenTelemetry tracing when TRACING_ENABLED.
 */
export class ObservabilitySide {
  readonly logger: Logger;
  /** Recurring lines (backend failures, connections lost and back): at most one a second per kind. */
  readonly throttledLog: ThrottledLog;
  readonly stats: StatsRegistry;
  readonly prometheus: PrometheusExporter;
  readonly #settings: Settings;
  readonly #forwarding: boolean;
  readonly #flusher: StatsFlusher;
  readonly #stopRuntimeStats: () => void;
  #tracing: Tracing | undefined;

  /**
   * `logger` replaces the one the settings describe (tests, embedding). A worker thread (`forwarding`,
   * docs/workers.md) keeps its stats for the main thread, which sends them: it has no sinks, does not
   * flush, and leaves the process's runtime gauges to the main thread.
   */
  constructor(settings: Settings, logger: Logger | undefined, forwarding = false) {
    this.#settings = settings;
    this.#forwarding = forwarding;
    this.logger = logger ?? settingsLogger(settings);
    this.throttledLog = new ThrottledLog({ logger: this.logger });
    this.stats = new StatsRegistry({ maxDynamicKeys: settings.statsMaxDynamicKeys });
    this.prometheus = new PrometheusExporter(this.stats, {
      mapping: prometheusMapping(settings),
      extraTags: settings.extraTags,
      logger: this.logger,
    });
    this.#stopRuntimeStats = forwarding
      ? () => undefined
      : registerRuntimeStats(this.stats, settings.statsFlushIntervalMs);
    const sinks = forwarding ? [] : statsSinks(settings, this.logger);
    this.#flusher = new StatsFlusher(this.stats, sinks, settings.statsFlushIntervalMs, this.logger);
  }

  /** Starts flushing stats, and tracing when TRACING_ENABLED. */
  async start(): Promise<void> {
    const settings = this.#settings;
    if (!this.#forwarding) this.#flusher.start();
    if (!settings.tracingEnabled) return;
    // Imported only when enabled: the OpenTelemetry SDK takes a quarter of a second to load.
    const { startTracing } = await import("../observability/tracing.js");
    this.#tracing = startTracing({
      serviceName: settings.tracingServiceName,
      serviceNamespace: settings.tracingServiceNamespace,
      serviceInstanceId: settings.tracingServiceInstanceId,
      protocol: settings.tracingExporterProtocol,
      samplingRate: settings.tracingSamplingRate,
      logger: this.logger,
    });
  }

  /** Ends tracing (exporting the spans still buffered). */
  async stopTracing(): Promise<void> {
    await this.#tracing?.stop();
  }

  /** Sends the stats left and closes the sinks. */
  stopFlushing(): Promise<void> {
    return this.#flusher.stop();
  }

  /** Stops the runtime gauges' sampling. */
  stopRuntimeStats(): void {
    this.#stopRuntimeStats();
  }
}

function settingsLogger(settings: Settings): Logger {
  return new Logger({
    level: logLevelFromSetting(settings.logLevel),
    format: settings.logFormat.toLowerCase() === "json" ? "json" : "text",
  });
}
