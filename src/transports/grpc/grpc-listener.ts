import { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Logger } from "../../observability/logger.js";
import { grpcCallScope } from "../../observability/request-channels.js";
import type { ThrottledLog } from "../../observability/throttled-log.js";
import { MAX_MESSAGE_BYTES } from "../message-limits.js";
import type { ConnectionAgeOptions } from "../server/connection-age.js";
import type { Http2Limits } from "../server/http2-limits.js";
import { type ListenAddress, ServerCore } from "../server/server-core.js";
import type { ServerTlsOptions } from "../server/server-tls.js";
import { callContextValues } from "./call-credentials.js";
import { logCallFailure } from "./call-failure-log.js";
import { serveTracedUnary } from "./call-tracing.js";
import { type CallDone, isFastPathStream, serveUnary, type UnaryMethod } from "./grpc-unary.js";
import type { RouteRegistrar } from "./route-registrar.js";
import { serverInterceptor } from "./server-interceptor.js";
import type { ServerMetrics } from "./server-metrics.js";

export interface GrpcListenerOptions {
  /** Services for connect-node (gRPC, gRPC-Web, Connect). */
  readonly routes: readonly RouteRegistrar[];
  /** Hot unary methods served on raw HTTP/2 streams when the call is plain gRPC. */
  readonly fastMethods: readonly UnaryMethod[];
  readonly metrics: ServerMetrics;
  readonly logger: Logger;
  /** Rate-limited warn lines of calls that failed on the backend. */
  readonly throttledLog: ThrottledLog;
  /** GRPC_SERVER_USE_TLS: TLS (and mTLS) with ALPN choosing HTTP/2 or HTTP/1.1; cleartext when absent. */
  readonly tls?: ServerTlsOptions | undefined;
  /** GRPC_MAX_CONNECTION_AGE(_GRACE) for HTTP/2 connections; no limit when absent. */
  readonly connectionAge?: ConnectionAgeOptions | undefined;
  /** Stream cap, request read timeout and idle timeout of HTTP/2 connections. */
  readonly limits: Http2Limits;
}

/**
 * Memory each HTTP/2 session of the gRPC port may use, in MB (Node's `maxSessionMemory`, default 10): past
 * it, the session refuses new streams with ENHANCE_YOUR_CALM, and several messages of up to
 * {@link MAX_MESSAGE_BYTES} may be in flight on one connection.
 */
const SESSION_MEMORY_MB = 64;

/**
 * The gRPC port: Envoy's plain gRPC over h2c or TLS (fast path for ShouldRateLimit and Health/Check), and
 * every service over gRPC, gRPC-Web and Connect through connect-node, on HTTP/2 and HTTP/1.1 alike.
 * Connections, limits, TLS and ageing are the {@link ServerCore}'s.
 */
export class GrpcListener {
  readonly #core: ServerCore;

  constructor(options: GrpcListenerOptions) {
    const adapter = connectNodeAdapter({
      routes: (r) => {
        for (const register of options.routes) register(r);
      },
      interceptors: [serverInterceptor(options.metrics, options.logger, options.throttledLog)],
      readMaxBytes: MAX_MESSAGE_BYTES,
      contextValues: callContextValues,
    });
    const fast = new Map(options.fastMethods.map((m) => [m.path, m]));
    const onDone: CallDone = (method, startedMs, _code, _message, error) => {
      options.metrics.record(method.name, startedMs);
      if (error !== undefined) logCallFailure(options.throttledLog, method.path, error);
    };
    this.#core = new ServerCore({
      http1: (req, res) => adapter(req, res),
      http2: {
        stream: (stream, headers, _flags, raw) => {
          const method = fast.get(headers[":path"] ?? "");
          if (method !== undefined && isFastPathStream(headers)) {
            // One boolean per call while nobody traces: the event objects are built only for listeners.
            if (grpcCallScope.hasSubscribers) return serveTracedUnary(stream, headers, method, onDone);
            return serveUnary(stream, headers, method, onDone);
          }
          // Node's own compatibility objects, built as its 'request' event would build them.
          adapter(new Http2ServerRequest(stream, headers, {}, raw), new Http2ServerResponse(stream));
        },
      },
      limits: options.limits,
      maxSessionMemoryMb: SESSION_MEMORY_MB,
      connectionAge: options.connectionAge,
      tls: options.tls,
      logger: options.logger,
    });
  }

  /** Starts listening; resolves with the bound address, `host:port` or the socket path. */
  async listen(address: ListenAddress): Promise<string> {
    const bound = await this.#core.listen(address);
    return typeof bound === "string" ? bound : `${bound.address}:${bound.port}`;
  }

  /** The bound TCP port (0 before listen or on a unix socket). */
  get port(): number {
    return this.#core.port;
  }

  /** Stops accepting and drains: {@link ServerCore.close}. */
  close(graceMs: number): Promise<void> {
    return this.#core.close(graceMs);
  }
}
