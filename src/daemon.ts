import { readFileSync } from "node:fs";
import type { CounterStore } from "./backends/counter-store.js";
import { createCounterStore } from "./backends/create-counter-store.js";
import { LocalOverLimitCache } from "./backends/local-over-limit-cache.js";
import { buildRuleSetInSlices } from "./config/build-rule-set.js";
import { dumpRuleSet } from "./config/dump-rule-set.js";
import { FileRuleSource } from "./config/file/file-rule-source.js";
import type { RuleCompiler, RuleSource, RuleUpdate } from "./config/rule-source.js";
import { XdsRuleSource } from "./config/xds/xds-rule-source.js";
import { DecisionEngine } from "./engine/decision-engine.js";
import type { RequestLimits } from "./engine/request-limits.js";
import { SettingsError } from "./errors.js";
import { ManagementApis } from "./management-apis.js";
import {
  DEFAULT_PROMETHEUS_MAPPING,
  RESPONSE_TIME_SCALE_LINE,
} from "./observability/default-prometheus-mapping.js";
import { DogStatsdSink } from "./observability/dogstatsd-sink.js";
import { InstrumentedCounterStore } from "./observability/instrumented-counter-store.js";
import { Logger, logLevelFromSetting } from "./observability/logger.js";
import { PrometheusExporter } from "./observability/prometheus-exporter.js";
import { PrometheusMapping } from "./observability/prometheus-mapping.js";
import { registerRuntimeStats } from "./observability/runtime-stats.js";
import { StatsFlusher } from "./observability/stats-flusher.js";
import { StatsRegistry } from "./observability/stats-registry.js";
import type { StatsSink } from "./observability/stats-sink.js";
import { StatsdSink } from "./observability/statsd-sink.js";
import { ThrottledLog } from "./observability/throttled-log.js";
import type { Tracing } from "./observability/tracing.js";
import { HealthChecker } from "./service/health-checker.js";
import { RateLimitService } from "./service/rate-limit-service.js";
import type { Settings } from "./settings/load-settings.js";
import { debugEndpoints, debugRoutes } from "./transports/debug/debug-routes.js";
import { metricsHandler } from "./transports/debug/metrics-handler.js";
import { rateLimitRoutes } from "./transports/grpc/connect-routes.js";
import { fastMethods } from "./transports/grpc/fast-methods.js";
import { GrpcListener } from "./transports/grpc/grpc-listener.js";
import type { Http2Limits } from "./transports/grpc/http2-limits.js";
import { ServerMetrics } from "./transports/grpc/server-metrics.js";
import { HttpListener } from "./transports/http/http-listener.js";
import { exactRoute } from "./transports/http/http-route.js";
import { jsonHandler } from "./transports/http/json-handler.js";

/** Test and embedding hooks; production uses the defaults. */
export interface DaemonOverrides {
  readonly logger?: Logger;
  readonly store?: CounterStore;
  readonly nowMs?: () => number;
}

/** Ports actually bound (differs from the settings when they ask for port 0). */
export interface BoundAddresses {
  http: number;
  debug: number;
  grpc: string;
}

/**
 * ratelimitd: settings → stats → counter store → engine → service → rule source → listeners.
 * `start()` follows the reference's order: the backend connects, the first rules load (unless
 * FORCE_START_WITHOUT_INITIAL_CONFIG), then the debug, gRPC and HTTP listeners open.
 */
export class Daemon {
  readonly logger: Logger;
  /** Recurring lines (backend failures, connections lost and back): at most one a second per kind. */
  readonly throttledLog: ThrottledLog;
  readonly stats: StatsRegistry;
  readonly health = new HealthChecker();
  readonly service: RateLimitService;
  readonly #store: CounterStore;
  /** The users and migrations APIs, their database and the migration worker. */
  readonly management: ManagementApis;
  readonly #ruleSource: RuleSource;
  readonly #flusher: StatsFlusher;
  readonly #grpc: GrpcListener;
  readonly #http: HttpListener;
  readonly #debug: HttpListener;
  readonly #prometheus: PrometheusExporter;
  /** USE_PROMETHEUS: PROMETHEUS_PATH on PROMETHEUS_ADDR (the debug port serves `/metrics` regardless). */
  readonly #prometheusListener: HttpListener | undefined;
  #tracing: Tracing | undefined;
  #stopping: Promise<void> | undefined;
  readonly #stopRuntimeStats: () => void;

  constructor(
    readonly settings: Settings,
    overrides: DaemonOverrides = {},
  ) {
    this.logger =
      overrides.logger ??
      new Logger({
        level: logLevelFromSetting(settings.logLevel),
        format: settings.logFormat.toLowerCase() === "json" ? "json" : "text",
      });
    this.throttledLog = new ThrottledLog({ logger: this.logger });
    this.stats = new StatsRegistry({ maxDynamicKeys: settings.statsMaxDynamicKeys });
    this.#prometheus = new PrometheusExporter(this.stats, {
      mapping: prometheusMapping(settings),
      extraTags: settings.extraTags,
      logger: this.logger,
    });
    this.#stopRuntimeStats = registerRuntimeStats(this.stats, settings.statsFlushIntervalMs);
    const localCache =
      settings.localCacheSizeInBytes > 0 ? this.#localCache(settings.localCacheSizeInBytes) : undefined;
    this.#store =
      overrides.store ??
      createCounterStore(settings, {
        stats: this.stats,
        logger: this.logger,
        throttledLog: this.throttledLog,
      });
    const requestLimits: RequestLimits = {
      maxDescriptors: settings.maxDescriptorsPerRequest,
      maxEntries: settings.maxEntriesPerDescriptor,
      maxEntryBytes: settings.maxDescriptorEntryBytes,
    };
    const engine = new DecisionEngine({
      nearLimitRatio: settings.nearLimitRatio,
      cacheKeyPrefix: settings.cacheKeyPrefix,
      expirationJitterMaxSeconds: settings.expirationJitterMaxSeconds,
      shadowMode: settings.shadowMode,
      quotaMode: settings.quotaMode,
      responseHeaders: settings.limitResponseHeadersEnabled
        ? {
            limit: settings.limitLimitHeader,
            remaining: settings.limitRemainingHeader,
            reset: settings.limitResetHeader,
          }
        : undefined,
      dynamicMetadata: settings.responseDynamicMetadata,
      localCache,
      stats: this.stats,
      random: Math.random,
      debug: this.logger.debugEnabled ? (line) => this.logger.debug(line) : undefined,
      requestLimits,
    });
    const scope = "ratelimit.service";
    this.service = new RateLimitService({
      engine,
      // The backend span's events; wrapped only when tracing, so the hot path pays nothing otherwise.
      store: settings.tracingEnabled ? new InstrumentedCounterStore(this.#store) : this.#store,
      counters: {
        configLoadSuccess: this.stats.counter(`${scope}.config_load_success`),
        configLoadError: this.stats.counter(`${scope}.config_load_error`),
        backendError: this.stats.counter(`${scope}.call.should_rate_limit.redis_error`),
        serviceError: this.stats.counter(`${scope}.call.should_rate_limit.service_error`),
      },
      logger: this.logger,
      stopIncrementWhenOverLimit:
        settings.stopCacheKeyIncrementWhenOverlimit && settings.backend !== "memcache",
      ...(overrides.nowMs ? { nowMs: overrides.nowMs } : {}),
    });
    this.#registerHealth();
    this.#ruleSource = this.#createRuleSource();
    this.#flusher = new StatsFlusher(this.stats, this.#sinks(), settings.statsFlushIntervalMs, this.logger);
    const metrics = new ServerMetrics(this.stats);
    this.management = new ManagementApis(settings, this.logger, this.stats);
    const core = { rateLimit: this.service, health: this.health };
    const http2Limits: Http2Limits = {
      maxConcurrentStreams: settings.grpcMaxConcurrentStreams,
      requestReadTimeoutMs: settings.grpcRequestReadTimeoutMs,
      maxIdleMs: settings.grpcMaxConnectionIdleMs,
    };
    this.#grpc = new GrpcListener({
      routes: [rateLimitRoutes(core), ...this.management.grpcRoutes],
      fastMethods: fastMethods(core, requestLimits),
      metrics,
      logger: this.logger,
      throttledLog: this.throttledLog,
      tls: settings.grpcServerUseTls
        ? {
            certFile: settings.grpcServerTlsCert,
            keyFile: settings.grpcServerTlsKey,
            clientCaFile: settings.grpcClientTlsCacert,
            clientSan: settings.grpcClientTlsSan,
          }
        : undefined,
      connectionAge: {
        maxAgeMs: settings.grpcMaxConnectionAgeMs,
        graceMs: settings.grpcMaxConnectionAgeGraceMs,
        random: Math.random,
      },
      limits: http2Limits,
    });
    this.#http = new HttpListener(
      [
        exactRoute("/json", jsonHandler(this.service, this.throttledLog, requestLimits)),
        exactRoute("/healthcheck", (_req, res) => {
          if (this.health.healthy) {
            res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
            res.end("OK");
          } else {
            res.writeHead(500);
            res.end();
          }
        }),
        ...this.management.httpRoutes,
      ],
      this.logger,
      undefined,
      http2Limits,
    );
    const debug = debugRoutes(
      debugEndpoints({
        rlconfig: () => dumpRuleSet(this.service.rules),
        stats: () => this.stats.snapshotLines(),
        metrics: () => this.#prometheus.text(),
        heapSnapshots: settings.debugHeapSnapshotEnabled,
      }),
    );
    this.#debug = new HttpListener(debug.routes, this.logger, debug.fallback, http2Limits);
    this.#prometheusListener =
      settings.usePrometheus && !settings.disableStats
        ? new HttpListener(
            [
              exactRoute(
                settings.prometheusPath,
                metricsHandler(() => this.#prometheus.text()),
              ),
            ],
            this.logger,
            undefined,
            http2Limits,
          )
        : undefined;
  }

  /** Starts everything; resolves once all listeners accept connections. */
  async start(): Promise<BoundAddresses> {
    const { settings, logger } = this;
    for (const warning of settings.warnings) logger.warn(warning);
    await this.#store.start();
    await this.#loadFirstRules();
    // The users/migrations database: a failure here is logged and retried in the background; rate
    // limiting does not depend on it.
    await this.management.start();
    this.#flusher.start();
    if (settings.tracingEnabled) {
      // Imported only when enabled: the OpenTelemetry SDK takes a quarter of a second to load.
      const { startTracing } = await import("./observability/tracing.js");
      this.#tracing = startTracing({
        serviceName: settings.tracingServiceName,
        serviceNamespace: settings.tracingServiceNamespace,
        serviceInstanceId: settings.tracingServiceInstanceId,
        protocol: settings.tracingExporterProtocol,
        samplingRate: settings.tracingSamplingRate,
        redisPerSecond: settings.redisPerSecond,
        logger,
      });
    }
    if (this.#prometheusListener !== undefined) {
      const { host, port } = settings.prometheusListen;
      await this.#prometheusListener.listen(host, port);
      logger.info(`Starting prometheus sink on ${settings.prometheusAddr}${settings.prometheusPath}`);
    }
    const debugPort = await this.#debug.listen(settings.debugHost, settings.debugPort);
    logger.warn(`Listening for debug on '${settings.debugHost}:${debugPort}'`);
    const grpc = await this.#grpc.listen(
      settings.grpcUds !== ""
        ? { path: settings.grpcUds }
        : { host: settings.grpcHost, port: settings.grpcPort },
    );
    logger.warn(
      `Listening for gRPC on '${settings.grpcUds !== "" ? settings.grpcUds : `${settings.grpcHost}:${this.#grpc.port}`}'`,
    );
    const httpPort = await this.#http.listen(settings.host, settings.port);
    logger.warn(`Listening for HTTP on '${settings.host}:${httpPort}'`);
    return { http: httpPort, debug: debugPort, grpc };
  }

  /** Graceful stop: listeners stop accepting, in-flight requests finish, then everything closes. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.logger.warn("shutting down");
      const graceMs = this.settings.shutdownGraceMs;
      await Promise.all([
        this.#grpc.close(graceMs),
        this.#http.close(graceMs),
        this.#debug.close(graceMs),
        this.#prometheusListener?.close(graceMs),
      ]);
      await this.#tracing?.stop();
      await this.#ruleSource.stop();
      await this.#flusher.stop();
      await this.#store.close();
      await this.management.stop(graceMs);
      this.#stopRuntimeStats();
      // Counts still held for the next second are written before the process ends.
      this.throttledLog.flush();
    })();
    return this.#stopping;
  }

  #registerHealth(): void {
    this.health.register("backend", false);
    this.health.register("sigterm", true);
    this.#store.onHealthChange((healthy) => this.health.set("backend", healthy));
    if (this.settings.healthyWithAtLeastOneConfigLoaded) {
      this.health.register("config", false);
      this.service.onRulesChange((rules) => this.health.set("config", rules.domains.size > 0));
    }
  }

  #createRuleSource(): RuleSource {
    const { settings, logger } = this;
    const compile: RuleCompiler = (documents, signal) =>
      buildRuleSetInSlices(documents, {
        mergeDomainConfig: settings.mergeDomainConfig,
        maxDescriptors: settings.configMaxDescriptors,
        signal,
        statsFor: (key) => this.stats.pinnedRuleStats(key),
        debug: logger.debugEnabled ? (line) => logger.debug(line) : undefined,
      });
    if (settings.configType === "GRPC_XDS_SOTW") {
      return new XdsRuleSource({
        serverUrl: settings.xdsServerUrl,
        nodeId: settings.xdsNodeId,
        nodeMetadata: settings.xdsNodeMetadataMap,
        tls: settings.xdsServerUseTls
          ? {
              caFile: settings.xdsServerTlsCacert,
              certFile: settings.xdsClientTlsCert,
              keyFile: settings.xdsClientTlsKey,
              serverName: settings.xdsServerTlsSan,
            }
          : undefined,
        headers: settings.xdsClientAdditionalHeaders,
        maxReceiveBytes: settings.xdsMaxMessageSizeBytes,
        connectRetryIntervalMs: settings.xdsServerConnectRetryIntervalMs,
        backoff: {
          initialMs: settings.xdsBackoffInitialIntervalMs,
          maxMs: settings.xdsBackoffMaxIntervalMs,
          factor: settings.xdsBackoffRandomFactor,
          jitter: settings.xdsBackoffJitter,
        },
        compile,
        log: logger,
      });
    }
    const layout = {
      runtimeRoot: settings.runtimeRoot,
      runtimeSubdirectory: settings.runtimeSubdirectory,
      runtimeAppDirectory: settings.runtimeAppDirectory,
      watchRoot: settings.runtimeWatchRoot,
      ignoreDotfiles: settings.runtimeIgnoreDotfiles,
    };
    return new FileRuleSource({
      layout,
      compile,
      maxDescriptors: settings.configMaxDescriptors,
      onReloading: () => logger.debug("got runtime update and reloading config"),
      // A missing or empty rule directory: said at start and on every reload while it lasts.
      warn: (line) => logger.warn(line),
      onReloadQueued: () => logger.debug("rule files changed during a reload: reloading again after it"),
    });
  }

  /** Waits for the first load outcome (success or failure) unless FORCE_START_WITHOUT_INITIAL_CONFIG. */
  #loadFirstRules(): Promise<void> {
    return new Promise((resolve) => {
      this.#ruleSource.start((update: RuleUpdate) => {
        this.service.applyRuleUpdate(update);
        resolve();
      });
      if (this.settings.forceStartWithoutInitialConfig) resolve();
    });
  }

  #localCache(sizeBytes: number): LocalOverLimitCache {
    const cache = new LocalOverLimitCache(sizeBytes);
    const counts = () => cache.counts();
    for (const name of [
      "entryCount",
      "hitCount",
      "missCount",
      "lookupCount",
      "evacuateCount",
      "expiredCount",
      "overwriteCount",
    ] as const) {
      this.stats.gauge(`ratelimit.localcache.${name}`, undefined, () => counts()[name]);
    }
    return cache;
  }

  #sinks(): StatsSink[] {
    const { settings } = this;
    if (settings.disableStats) return [];
    const sinks: StatsSink[] = [];
    if (settings.useDogStatsd) {
      // DogStatsD replaces plain statsd: both would send to STATSD_HOST:STATSD_PORT and count twice.
      sinks.push(
        new DogStatsdSink({
          host: settings.statsdHost,
          port: settings.statsdPort,
          extraTags: settings.extraTags,
          mogrifiers: settings.dogStatsdMogrifiers,
          logger: this.logger,
        }),
      );
    } else if (settings.useStatsd) {
      sinks.push(
        new StatsdSink({
          host: settings.statsdHost,
          port: settings.statsdPort,
          protocol: settings.statsdProtocol,
          extraTags: settings.extraTags,
          logger: this.logger,
        }),
      );
    }
    return sinks;
  }
}

/**
 * The statsd_exporter mapping: PROMETHEUS_MAPPER_YAML's file, or the reference's built-in one (without its
 * `scale` line when PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS, as the reference edits it).
 */
function prometheusMapping(settings: Settings): PrometheusMapping {
  const file = settings.prometheusMapperYaml;
  let text = settings.prometheusResponseTimeAsMilliseconds
    ? DEFAULT_PROMETHEUS_MAPPING.replace(RESPONSE_TIME_SCALE_LINE, "")
    : DEFAULT_PROMETHEUS_MAPPING;
  if (file !== "") {
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new SettingsError([`PROMETHEUS_MAPPER_YAML=${file}: ${(error as Error).message}`]);
    }
  }
  const mapping = PrometheusMapping.parse(text);
  if (!mapping.ok) throw new SettingsError([`PROMETHEUS_MAPPER_YAML=${file}: ${mapping.reason}`]);
  return mapping.value;
}
