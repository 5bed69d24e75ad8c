import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttp2Server, type Http2Session } from "node:http2";
import type { AddressInfo, Server as NetServer, Socket } from "node:net";
import type { Logger } from "../../observability/logger.js";
import { Http1Connections } from "../grpc/http1-connections.js";
import { type Http2Limits, http2Settings, limitRequestRead, limitSessionIdle } from "../grpc/http2-limits.js";
import { createProtocolMux } from "../grpc/protocol-mux.js";
import { sendGoError, sendNotFound } from "./http-responses.js";
import type { HttpRoute } from "./http-route.js";

/**
 * An HTTP listener dispatching on the request path (query ignored); unmatched paths get Go's
 * `404 page not found`. It speaks HTTP/1.1 and cleartext HTTP/2 (prior knowledge) on one port. Used for
 * the main HTTP port and the debug port.
 */
export class HttpListener {
  readonly #server: NetServer;
  readonly #http1: Server;
  readonly #http1Connections: Http1Connections;
  readonly #sessions = new Set<Http2Session>();
  readonly #sockets = new Set<Socket>();

  constructor(
    private readonly routes: readonly HttpRoute[],
    private readonly logger: Logger,
    private readonly fallback: HttpRoute["handle"] = (_req, res) => sendNotFound(res),
    /** The gRPC port's limits (stream cap, request read and idle timeouts), applied here too; none when absent. */
    limits?: Http2Limits,
  ) {
    this.#http1 = createServer((req, res) => this.#dispatch(req, res));
    // Node's HTTP/2 compatibility objects offer what the routes use of IncomingMessage/ServerResponse
    // (method, url, headers, body events; writeHead, end), so one set of handlers serves both.
    const http2 = createHttp2Server({ settings: limits ? http2Settings(limits) : {} }, (req, res) =>
      this.#dispatch(req as unknown as IncomingMessage, res as unknown as ServerResponse),
    );
    http2.on("session", (session: Http2Session) => {
      this.#sessions.add(session);
      session.on("close", () => this.#sessions.delete(session));
      session.on("error", () => session.destroy());
      if (limits) limitSessionIdle(session, limits.maxIdleMs);
    });
    if (limits)
      http2.on("stream", (stream, headers) => limitRequestRead(stream, headers, limits.requestReadTimeoutMs));
    const http1 = new Http1Connections(this.#http1, limits?.requestReadTimeoutMs ?? 0);
    this.#http1Connections = http1;
    this.#server = createProtocolMux(
      (socket: Socket) => http2.emit("connection", socket),
      (socket: Socket) => http1.accept(socket),
    );
    this.#server.on("connection", (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    const path = query < 0 ? url : url.slice(0, query);
    const route = this.routes.find((r) => r.matches(path));
    try {
      await (route ? route.handle(req, res, path) : this.fallback(req, res, path));
    } catch (error) {
      this.logger.error(`HTTP ${req.method} ${path} failed: ${(error as Error).stack}`);
      if (!res.headersSent) sendGoError(res, 500, "Internal Server Error");
      else res.destroy();
    }
  }

  /** Starts listening; resolves with the bound port. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(port, host, () => {
        this.#server.off("error", reject);
        resolve((this.#server.address() as AddressInfo).port);
      });
    });
  }

  /**
   * Stops accepting, lets requests in flight finish (closing each keep-alive connection as soon as it is
   * idle; HTTP/2 sessions get GOAWAY), then destroys every connection still open after `graceMs`.
   */
  async close(graceMs: number): Promise<void> {
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
  }
}
