import { rmSync } from "node:fs";
import { createServer as createHttp1Server, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
  type ServerOptions,
} from "node:http2";
import type { AddressInfo, Server, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Logger } from "../../observability/logger.js";
import { CertificateReloader } from "./certificate-reloader.js";
import { type ConnectionAgeOptions, limitSessionAge } from "./connection-age.js";
import { Http1Connections } from "./http1-connections.js";
import { type Http2Limits, http2Settings, limitRequestRead, limitSessionIdle } from "./http2-limits.js";
import { createProtocolMux } from "./protocol-mux.js";
import { createTlsServer, readServerIdentity, type ServerTlsOptions } from "./server-tls.js";

/**
 * Where to listen: TCP host and port, or a unix socket path (GRPC_UDS). `reusePort` shares the TCP port
 * with the other worker threads (SO_REUSEPORT, docs/workers.md).
 */
export type ListenAddress =
  | { readonly host: string; readonly port: number; readonly reusePort?: boolean }
  | { readonly path: string };

/**
 * What serves a port's HTTP/2 streams: raw streams (the gRPC fast path decides per stream), or Node's
 * compatibility objects, built by Node's own `request` event (which also answers CONNECT and `Expect`).
 */
export type Http2Handler =
  | {
      readonly stream: (
        stream: ServerHttp2Stream,
        headers: IncomingHttpHeaders,
        flags: number,
        rawHeaders: string[],
      ) => void;
    }
  | { readonly request: (req: Http2ServerRequest, res: Http2ServerResponse) => void };

/** Options of {@link ServerCore}. */
export interface ServerCoreOptions {
  /** HTTP/1.1 requests: cleartext, or over TLS when ALPN chose `http/1.1`. */
  readonly http1: (req: IncomingMessage, res: ServerResponse) => void;
  readonly http2: Http2Handler;
  /**
   * Stream cap, request read timeout (HTTP/2 streams and HTTP/1.1 requests alike) and idle timeout of
   * HTTP/2 connections.
   */
  readonly limits: Http2Limits;
  /** Node's `maxSessionMemory` (MB) for each HTTP/2 session; Node's default (10) when absent. */
  readonly maxSessionMemoryMb?: number | undefined;
  /** GRPC_MAX_CONNECTION_AGE(_GRACE) for HTTP/2 connections; no limit when absent. */
  readonly connectionAge?: ConnectionAgeOptions | undefined;
  /** TLS (and mTLS) with ALPN choosing HTTP/2 or HTTP/1.1, and certificate reloads; cleartext when absent. */
  readonly tls?: ServerTlsOptions | undefined;
  /** TLS problems: refused client certificates (warn), failed handshakes (debug), certificate reloads. */
  readonly logger: Logger;
}

/**
 * The server under every listening port, whatever it serves (gRPC, `/json` and the REST APIs, debug): it
 * accepts connections on TCP or a unix socket, tells HTTP/2 from HTTP/1.1 (the first bytes in cleartext,
 * ALPN under TLS), hands each to Node's HTTP/2 or HTTP/1.1 server, applies {@link Http2Limits} and
 * connection ageing, and keeps track of every connection so that {@link close} can drain them within a
 * grace period. What a request means is left to the {@link ServerCoreOptions} handlers.
 */
export class ServerCore {
  readonly #server: Server;
  readonly #sessions = new Set<Http2Session>();
  readonly #sockets = new Set<Socket>();
  readonly #http1;
  readonly #http1Connections: Http1Connections;
  readonly #reloader: CertificateReloader | undefined;
  #unixPath: string | undefined;

  constructor(options: ServerCoreOptions) {
    const { limits, connectionAge: age, http2: handler } = options;
    const http2Options: ServerOptions = { settings: http2Settings(limits) };
    if (options.maxSessionMemoryMb !== undefined) http2Options.maxSessionMemory = options.maxSessionMemoryMb;
    const http2 =
      "request" in handler
        ? createHttp2Server(http2Options, handler.request)
        : createHttp2Server(http2Options);
    http2.on("session", (session: Http2Session) => {
      this.#sessions.add(session);
      session.on("close", () => this.#sessions.delete(session));
      session.on("error", () => session.destroy());
      if (age !== undefined) limitSessionAge(session, age);
      limitSessionIdle(session, limits.maxIdleMs);
      limits.openStreams?.track(session, limits.maxConcurrentStreams);
    });
    const { openStreams } = limits;
    if ("stream" in handler) {
      const serve = handler.stream;
      http2.on(
        "stream",
        (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, raw: string[]) => {
          if (openStreams !== undefined && !openStreams.admit(stream)) return;
          limitRequestRead(stream, headers, limits.requestReadTimeoutMs);
          serve(stream, headers, flags, raw);
        },
      );
    } else {
      if (openStreams !== undefined) {
        // Before Node's own listener, which builds the request objects: a refused stream's request ends
        // at once as aborted, and its answer goes nowhere.
        http2.prependListener("stream", (stream: ServerHttp2Stream) => openStreams.admit(stream));
      }
      http2.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) =>
        limitRequestRead(stream, headers, limits.requestReadTimeoutMs),
      );
    }
    this.#http1 = createHttp1Server(options.http1);
    const http1 = new Http1Connections(this.#http1, limits.requestReadTimeoutMs);
    this.#http1Connections = http1;
    if (options.tls === undefined) {
      this.#server = createProtocolMux(
        (socket) => http2.emit("connection", socket),
        (socket) => http1.accept(socket),
      );
    } else {
      const { logger } = options;
      const tls = createTlsServer(
        options.tls,
        readServerIdentity(options.tls),
        (socket: TLSSocket) =>
          socket.alpnProtocol === "h2" ? http2.emit("connection", socket) : http1.accept(socket),
        (reason) => logger.warn(`error validating client: ${reason}`),
      );
      tls.on("tlsClientError", (error) => {
        if (logger.debugEnabled) logger.debug(`TLS handshake failed: ${error.message}`);
      });
      this.#reloader = new CertificateReloader(tls, options.tls, logger);
      this.#server = tls;
    }
    this.#server.on("connection", (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
  }

  /**
   * Starts listening; resolves with the bound address (`server.address()`: the port chosen for port 0, or
   * the socket path). A stale unix socket file is removed first, and again at {@link close}.
   */
  listen(address: ListenAddress): Promise<AddressInfo | string> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      const done = () => {
        this.#server.off("error", reject);
        resolve(this.#server.address() as AddressInfo | string);
      };
      if ("path" in address) {
        rmSync(address.path, { force: true });
        this.#unixPath = address.path;
        this.#server.listen(address.path, done);
      } else if (address.reusePort === true) {
        this.#server.listen({ port: address.port, host: address.host, reusePort: true }, done);
      } else this.#server.listen(address.port, address.host, done);
    });
  }

  /** The bound TCP port (0 before listen or on a unix socket). */
  get port(): number {
    const bound = this.#server.address();
    return bound !== null && typeof bound === "object" ? bound.port : 0;
  }

  /**
   * Stops accepting, lets requests in flight finish (HTTP/2 sessions get GOAWAY; each HTTP/1.1 keep-alive
   * connection closes as soon as it is idle), and destroys every connection still open after `graceMs` —
   * at the socket, since an HTTP/2 session whose peer stopped reading never completes its own close.
   */
  async close(graceMs: number): Promise<void> {
    this.#reloader?.close();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const session of this.#sessions) session.close();
    this.#http1.close();
    // Node's closeIdleConnections() does nothing on a server that never listened itself.
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
