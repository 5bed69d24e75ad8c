import { dumpRuleSet } from "../config/dump-rule-set.js";
import { refusingOtherOrigins } from "../console/cross-site-guard.js";
import type { RequestLimits } from "../engine/request-limits.js";
import type { Logger } from "../observability/logger.js";
import type { PrometheusExporter } from "../observability/prometheus-exporter.js";
import type { StatsRegistry } from "../observability/stats-registry.js";
import type { ThrottledLog } from "../observability/throttled-log.js";
import type { DecisionExplainer } from "../service/decision-explainer.js";
import type { HealthChecker } from "../service/health-checker.js";
import type { RateLimitService } from "../service/rate-limit-service.js";
import type { Settings } from "../settings/load-settings.js";
import {
  debugEndpoints,
  debugRoutes,
  type WorkersEndpointSource,
  workersHandler,
} from "../transports/debug/debug-routes.js";
import { explainHandler } from "../transports/debug/explain-handler.js";
import { metricsHandler } from "../transports/debug/metrics-handler.js";
import { fastMethods } from "../transports/grpc/fast-methods.js";
import { GrpcListener } from "../transports/grpc/grpc-listener.js";
import { rateLimitRoutes } from "../transports/grpc/rate-limit-routes.js";
import type { RouteRegistrar } from "../transports/grpc/route-registrar.js";
import { ServerMetrics } from "../transports/grpc/server-metrics.js";
import { HttpListener } from "../transports/http/http-listener.js";
import { exactRoute, type HttpRoute } from "../transports/http/http-route.js";
import { jsonHandler } from "../transports/http/json-handler.js";
import type { Http2Limits } from "../transports/server/http2-limits.js";
import { OpenStreams } from "../transports/server/open-streams.js";
import { listeningAsSet } from "./listen-errors.js";

/**
 * Where a browser on this machine opens the console: a wildcard DEBUG_HOST (`0.0.0.0`, `::`, empty) is
 * reached as `localhost`; an IPv6 address goes in brackets.
 */
export function consoleUrl(debugHost: string, debugPort: number): string {
  const wildcard = debugHost === "" || debugHost === "0.0.0.0" || debugHost === "::";
  const host = wildcard ? "localhost" : debugHost.includes(":") ? `[${debugHost}]` : debugHost;
  return `http://${host}:${debugPort}/console`;
}

/** Ports actually bound (differs from the settings when they ask for port 0). */
export interface BoundAddresses {
  http: number;
  debug: number;
  grpc: string;
}

/** What the listeners serve. */
export interface ListenerParts {
  readonly settings: Settings;
  readonly logger: Logger;
  readonly throttledLog: ThrottledLog;
  readonly stats: StatsRegistry;
  readonly prometheus: PrometheusExporter;
  readonly service: RateLimitService;
  readonly health: HealthChecker;
  readonly requestLimits: RequestLimits;
  /** `POST /explain` on the debug port. */
  readonly explainer: DecisionExplainer;
  /** The users and migrations APIs' routes, served beside the rate-limit ones. */
  readonly management: {
    readonly httpRoutes: readonly HttpRoute[];
    readonly grpcRoutes: readonly RouteRegistrar[];
  };
  /** The operator console's route on the debug port; absent when CONSOLE_ENABLED=false. */
  readonly console: HttpRoute | undefined;
  /** WORKERS > 1: `/workers` on the debug port (docs/workers.md). */
  readonly workers?: WorkersEndpointSource | undefined;
}

/**
 * The daemon's ports: gRPC (GRPC_PORT or GRPC_UDS), HTTP (PORT), debug (DEBUG_PORT), and Prometheus
 * (PROMETHEUS_ADDR) when USE_PROMETHEUS.
 */
export class Listeners {
  readonly #parts: ListenerParts;
  readonly #grpc: GrpcListener;
  readonly #http: HttpListener;
  readonly #debug: HttpListener;
  /** USE_PROMETHEUS: PROMETHEUS_PATH on PROMETHEUS_ADDR (the debug port serves `/metrics` regardless). */
  readonly #prometheus: HttpListener | undefined;
  /** Which ports {@link listen} opened. */
  #role: "all" | "owner" | "decisions" = "all";

  constructor(parts: ListenerParts) {
    this.#parts = parts;
    const limits = http2Limits(parts.settings, openStreams(parts));
    this.#grpc = grpcListener(parts, new ServerMetrics(parts.stats), limits);
    this.#http = httpListener(parts, limits);
    this.#debug = debugListener(parts, limits);
    this.#prometheus = prometheusListener(parts, limits);
  }

  /**
   * Opens Prometheus's port, then debug, gRPC and HTTP, as the reference does; logs each address. With
   * WORKERS > 1 (docs/workers.md) the main thread opens only Prometheus's and the debug port (`owner`), and
   * each worker thread only gRPC and HTTP (`decisions`), with `reusePort`, on the ports `decisionPorts`
   * names when given (those the first worker bound).
   */
  async listen(
    role: "all" | "owner" | "decisions" = "all",
    decisionPorts?: { readonly grpc: number; readonly http: number },
  ): Promise<BoundAddresses> {
    this.#role = role;
    const debugPort = role === "decisions" ? 0 : await this.#listenDebugSide();
    if (role === "owner") return { http: 0, debug: debugPort, grpc: "" };
    return this.#listenDecisionPorts(debugPort, role === "decisions", decisionPorts);
  }

  /** Prometheus's port (USE_PROMETHEUS) and the debug port; resolves with the debug port. */
  async #listenDebugSide(): Promise<number> {
    const { settings, logger } = this.#parts;
    if (this.#prometheus !== undefined) {
      const { host, port } = settings.prometheusListen;
      await listeningAsSet("PROMETHEUS_ADDR", settings.prometheusAddr, this.#prometheus.listen(host, port));
      logger.info(`Starting prometheus sink on ${settings.prometheusAddr}${settings.prometheusPath}`);
    }
    const debugPort = await listeningAsSet(
      "DEBUG_PORT",
      String(settings.debugPort),
      this.#debug.listen(settings.debugHost, settings.debugPort),
    );
    logger.warn(`Listening for debug on '${settings.debugHost}:${debugPort}'`);
    if (this.#parts.console !== undefined) {
      logger.warn(`Operator console at ${consoleUrl(settings.debugHost, debugPort)}`);
    }
    return debugPort;
  }

  /** The gRPC and HTTP ports: the settings' own, or `ports`; shared with the other workers when `reusePort`. */
  async #listenDecisionPorts(
    debugPort: number,
    reusePort: boolean,
    ports: { readonly grpc: number; readonly http: number } | undefined,
  ): Promise<BoundAddresses> {
    const { settings, logger } = this.#parts;
    const grpcPort = ports?.grpc ?? settings.grpcPort;
    const port = ports?.http ?? settings.port;
    const grpc = await (settings.grpcUds !== ""
      ? listeningAsSet("GRPC_UDS", settings.grpcUds, this.#grpc.listen({ path: settings.grpcUds }))
      : listeningAsSet(
          "GRPC_PORT",
          String(grpcPort),
          this.#grpc.listen(
            reusePort
              ? { host: settings.grpcHost, port: grpcPort, reusePort }
              : { host: settings.grpcHost, port: grpcPort },
          ),
        ));
    logger.warn(
      `Listening for gRPC on '${settings.grpcUds !== "" ? settings.grpcUds : `${settings.grpcHost}:${this.#grpc.port}`}'`,
    );
    const httpPort = await listeningAsSet(
      "PORT",
      String(port),
      this.#http.listen(settings.host, port, reusePort),
    );
    logger.warn(`Listening for HTTP on '${settings.host}:${httpPort}'`);
    return { http: httpPort, debug: debugPort, grpc };
  }

  /** Stops accepting; requests in flight get `graceMs` to finish. */
  async close(graceMs: number): Promise<void> {
    const role = this.#role;
    await Promise.all([
      role === "owner" ? undefined : this.#grpc.close(graceMs),
      role === "owner" ? undefined : this.#http.close(graceMs),
      role === "decisions" ? undefined : this.#debug.close(graceMs),
      role === "decisions" ? undefined : this.#prometheus?.close(graceMs),
    ]);
  }
}

function http2Limits(settings: Settings, streams: OpenStreams | undefined): Http2Limits {
  return {
    maxConcurrentStreams: settings.grpcMaxConcurrentStreams,
    requestReadTimeoutMs: settings.grpcRequestReadTimeoutMs,
    maxIdleMs: settings.grpcMaxConnectionIdleMs,
    openStreams: streams,
  };
}

/**
 * GRPC_MAX_TOTAL_STREAMS over every port, with `ratelimit_server.open_streams` (a gauge),
 * `ratelimit_server.refused_streams` and `ratelimit_server.streams_bound_reached` (counters), and a warn
 * line a second at most of each kind.
 */
function openStreams(parts: ListenerParts): OpenStreams | undefined {
  const max = parts.settings.grpcMaxTotalStreams;
  if (max === 0) return undefined;
  const refused = parts.stats.counter("ratelimit_server.refused_streams");
  const narrowed = parts.stats.counter("ratelimit_server.streams_bound_reached");
  const streams: OpenStreams = new OpenStreams(
    max,
    () => {
      refused.add(1);
      parts.throttledLog.warn(
        "refused HTTP/2 streams",
        `refused an HTTP/2 stream (REFUSED_STREAM): ${max} streams open, GRPC_MAX_TOTAL_STREAMS`,
      );
    },
    (perConnection) => {
      narrowed.add(1);
      parts.throttledLog.warn(
        "HTTP/2 streams bound reached",
        `${max} HTTP/2 streams open (GRPC_MAX_TOTAL_STREAMS): each connection may now open ${perConnection}`,
      );
    },
  );
  parts.stats.gauge("ratelimit_server.open_streams", undefined, () => streams.open);
  return streams;
}

function grpcListener(parts: ListenerParts, metrics: ServerMetrics, limits: Http2Limits): GrpcListener {
  const { settings } = parts;
  const core = { rateLimit: parts.service, health: parts.health };
  return new GrpcListener({
    routes: [rateLimitRoutes(core, parts.requestLimits), ...parts.management.grpcRoutes],
    fastMethods: fastMethods(core, parts.requestLimits),
    metrics,
    logger: parts.logger,
    throttledLog: parts.throttledLog,
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
    limits,
  });
}

function httpListener(parts: ListenerParts, limits: Http2Limits): HttpListener {
  const { service, health, throttledLog } = parts;
  const routes = [
    exactRoute("/json", jsonHandler(service, throttledLog, parts.requestLimits)),
    exactRoute("/healthcheck", (_req, res) => {
      if (health.healthy) {
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        res.end("OK");
      } else {
        res.writeHead(500);
        res.end();
      }
    }),
    ...parts.management.httpRoutes,
  ];
  return new HttpListener(routes, parts.logger, undefined, limits);
}

function debugListener(parts: ListenerParts, limits: Http2Limits): HttpListener {
  const debug = debugRoutes(
    debugEndpoints({
      rlconfig: () => dumpRuleSet(parts.service.rules),
      stats: () => parts.stats.snapshotLines(),
      metrics: () => parts.prometheus.text(),
      // What it reads (rules, counters) is for the operator, not for pages of other sites.
      explain: refusingOtherOrigins(explainHandler(parts.explainer)),
      heapSnapshots: parts.settings.debugHeapSnapshotEnabled,
      // Ending a worker is for the operator, not for pages of other sites.
      workers: parts.workers === undefined ? undefined : refusingOtherOrigins(workersHandler(parts.workers)),
    }),
  );
  const routes =
    parts.console === undefined
      ? debug.routes
      : [parts.console, exactRoute("/", browsersToConsole(debug.fallback)), ...debug.routes];
  return new HttpListener(routes, parts.logger, debug.fallback, limits);
}

/**
 * `/` sends a browser (a request accepting `text/html`) to the console; every other client gets the
 * reference's endpoint listing as before.
 */
function browsersToConsole(listing: HttpRoute["handle"]): HttpRoute["handle"] {
  return (req, res, path) => {
    if (!/\btext\/html\b/.test(String(req.headers.accept ?? ""))) return listing(req, res, path);
    res.writeHead(302, { location: "/console", "content-length": 0 });
    res.end();
  };
}

function prometheusListener(parts: ListenerParts, limits: Http2Limits): HttpListener | undefined {
  const { settings, prometheus } = parts;
  if (!settings.usePrometheus || settings.disableStats) return undefined;
  const route = exactRoute(
    settings.prometheusPath,
    metricsHandler(() => prometheus.text()),
  );
  return new HttpListener([route], parts.logger, undefined, limits);
}
