import { rmSync } from "node:fs";
import { createServer as createHttp1Server, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createServer as createHttp2Server,
  Http2ServerRequest,
  Http2ServerResponse,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import type { AddressInfo, Server, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Logger } from "../../observability/logger.js";
import { grpcCallScope } from "../../observability/request-channels.js";
import type { ThrottledLog } from "../../observability/throttled-log.js";
import { callContextValues } from "./call-credentials.js";
import { logCallFailure } from "./call-failure-log.js";
import { serveTracedUnary } from "./call-tracing.js";
import { CertificateReloader } from "./certificate-reloader.js";
import { type ConnectionAgeOptions, limitSessionAge } from "./connection-age.js";
import {
  type CallDone,
  isFastPathStream,
  MAX_MESSAGE_BYTES,
  serveUnary,
  type UnaryMethod,
} from "./grpc-unary.js";
import { Http1Connections } from "./http1-connections.js";
import { type Http2Limits, http2Settings, limitRequestRead, limitSessionIdle } from "./http2-limits.js";
import { createProtocolMux } from "./protocol-mux.js";
import type { RouteRegistrar } from "./rate-limit-routes.js";
import { serverInterceptor } from "./server-interceptor.js";
import type { ServerMetrics } from "./server-metrics.js";
import { createTlsServer, readServerIdentity, type ServerTlsOptions } from "./server-tls.js";

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

/** Where to listen: TCP host and port, or a unix socket path (GRPC_UDS). */
export type ListenAddress = { readonly host: string; readonly port: number } | { readonly path: string };

/**
 * The gRPC port: Envoy's plain gRPC over h2c or TLS (fast path for ShouldRateLimit and Health/Check), and
 * every service over gRPC, gRPC-Web and Connect through connect-node, on HTTP/2 and HTTP/1.1 alike.
 * HTTP/2 connections are aged out with GOAWAY as grpc-go's MaxConnectionAge does, and bounded by
 * {@link Http2Limits}.
 */
export class GrpcListener {
  readonly #server: Server;
  readonly #sessions = new Set<Http2Session>();
  readonly #sockets = new Set<Socket>();
  readonly #http1;
  readonly #http1Connections: Http1Connections;
  readonly #reloader: CertificateReloader | undefined;
  #unixPath: string | undefined;

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
    const { connectionAge: age, limits } = options;
    const http2 = createHttp2Server({ maxSessionMemory: 64, settings: http2Settings(limits) });
    http2.on("session", (session: Http2Session) => {
      this.#sessions.add(session);
      session.on("close", () => this.#sessions.delete(session));
      session.on("error", () => session.destroy());
      if (age !== undefined) limitSessionAge(session, age);
      limitSessionIdle(session, limits.maxIdleMs);
    });
    http2.on(
      "stream",
      (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, _flags: number, raw: string[]) => {
        limitRequestRead(stream, headers, limits.requestReadTimeoutMs);
        const method = fast.get(headers[":path"] ?? "");
        if (method !== undefined && isFastPathStream(headers)) {
          // One boolean per call while nobody traces: the event objects are built only for listeners.
          if (grpcCallScope.hasSubscribers) return serveTracedUnary(stream, headers, method, onDone);
          return serveUnary(stream, headers, method, onDone);
        }
        // Node's own compatibility objects, built as its 'request' event would build them.
        adapter(new Http2ServerRequest(stream, headers, {}, raw), new Http2ServerResponse(stream));
      },
    );
    this.#http1 = createHttp1Server((req: IncomingMessage, res: ServerResponse) => adapter(req, res));
    const http1 = new Http1Connections(this.#http1, limits.requestReadTimeoutMs);
    this.#http1Connections = http1;
    if (options.tls === undefined) {
      this.#server = createProtocolMux(
        (socket) => http2.emit("connection", socket),
        (socket) => http1.accept(socket),
      );
    } else {
      const tls = createTlsServer(
        options.tls,
        readServerIdentity(options.tls),
        (socket: TLSSocket) =>
          socket.alpnProtocol === "h2" ? http2.emit("connection", socket) : http1.accept(socket),
        (reason) => options.logger.warn(`error validating client: ${reason}`),
      );
      tls.on("tlsClientError", (error) => {
        if (options.logger.debugEnabled) options.logger.debug(`TLS handshake failed: ${error.message}`);
      });
      this.#reloader = new CertificateReloader(tls, options.tls, options.logger);
      this.#server = tls;
    }
    this.#server.on("connection", (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
  }

  /** Starts listening; resolves with the bound address (useful with port 0). */
  listen(address: ListenAddress): Promise<string> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      const done = () => {
        this.#server.off("error", reject);
        const bound = this.#server.address();
        resolve(
          typeof bound === "string"
            ? bound
            : `${(bound as AddressInfo).address}:${(bound as AddressInfo).port}`,
        );
      };
      if ("path" in address) {
        rmSync(address.path, { force: true });
        this.#unixPath = address.path;
        this.#server.listen(address.path, done);
      } else this.#server.listen(address.port, address.host, done);
    });
  }

  /** The bound TCP port (0 before listen or on a unix socket). */
  get port(): number {
    const bound = this.#server.address();
    return bound !== null && typeof bound === "object" ? bound.port : 0;
  }

  /**
   * Stops accepting, lets in-flight calls finish (GOAWAY on HTTP/2), and destroys every connection still
   * open after `graceMs` — at the socket, since an HTTP/2 session whose peer stopped reading never
   * completes its own close.
   */
  async close(graceMs: number): Promise<void> {
    this.#reloader?.close();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const session of this.#sessions) session.close();
    this.#http1.close();
    this.#http1Connections.endAll();
    const timer = setTimeout(() => {
      for (const socket of this.#sockets) socket.destroy();
    }, graceMs);
    timer.unref();
    await closed;
    clearTimeout(timer);
    if (this.#unixPath) rmSync(this.#unixPath, { force: true });
  }
}
