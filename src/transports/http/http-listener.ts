import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../observability/logger.js";
import { type Http2Limits, NO_HTTP2_LIMITS } from "../server/http2-limits.js";
import { ServerCore } from "../server/server-core.js";
import { sendGoError, sendNotFound } from "./http-responses.js";
import type { HttpRoute } from "./http-route.js";

/**
 * An HTTP listener dispatching on the request path (query ignored); unmatched paths get Go's
 * `404 page not found`. It speaks HTTP/1.1 and cleartext HTTP/2 (prior knowledge) on one port, through the
 * {@link ServerCore}. Used for the main HTTP port, the debug port and PROMETHEUS_ADDR.
 */
export class HttpListener {
  readonly #core: ServerCore;

  constructor(
    private readonly routes: readonly HttpRoute[],
    private readonly logger: Logger,
    private readonly fallback: HttpRoute["handle"] = (_req, res) => sendNotFound(res),
    /** The gRPC port's limits (stream cap, request read and idle timeouts), applied here too; none when absent. */
    limits: Http2Limits = NO_HTTP2_LIMITS,
  ) {
    this.#core = new ServerCore({
      http1: (req, res) => this.#dispatch(req, res),
      // Node's HTTP/2 compatibility objects offer what the routes use of IncomingMessage/ServerResponse
      // (method, url, headers, body events; writeHead, end), so one set of handlers serves both.
      http2: {
        request: (req, res) =>
          this.#dispatch(req as unknown as IncomingMessage, res as unknown as ServerResponse),
      },
      limits,
      logger,
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
  async listen(host: string, port: number, reusePort = false): Promise<number> {
    const bound = await this.#core.listen(reusePort ? { host, port, reusePort } : { host, port });
    return typeof bound === "string" ? 0 : bound.port;
  }

  /** Stops accepting and drains: {@link ServerCore.close}. */
  close(graceMs: number): Promise<void> {
    return this.#core.close(graceMs);
  }
}
