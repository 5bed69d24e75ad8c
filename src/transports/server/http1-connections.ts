import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { durationText } from "./http2-limits.js";

/** A connection's requests in flight and the timer bounding how long its current request may take. */
interface ConnectionState {
  readonly requests: Map<IncomingMessage, ServerResponse>;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The HTTP/1.1 connections of a port, handed to an `http.Server` that never listens itself (the port's
 * protocol mux or TLS server accepts them). Node tracks connections only on servers that listen — both
 * for `closeIdleConnections()` and for its `headersTimeout`/`requestTimeout` checks — so this does both:
 *
 * - at shutdown, idle keep-alive connections end at once and busy ones after their response, instead of
 *   lingering until the keep-alive timeout;
 * - a request must arrive in full within `requestReadTimeoutMs` (GRPC_REQUEST_READ_TIMEOUT) of the
 *   connection opening or of the previous response ending, else the client gets `408 Request Timeout`
 *   and the connection closes, as Node's own `requestTimeout` does. Without it, a client trickling its
 *   headers holds a connection for ever.
 */
export class Http1Connections {
  readonly #connections = new Map<Socket, ConnectionState>();
  #closing = false;

  constructor(
    private readonly server: Server,
    private readonly requestReadTimeoutMs = 0,
  ) {
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket;
      const state = this.#connections.get(socket);
      if (state === undefined) return;
      state.requests.set(req, res);
      res.once("close", () => {
        state.requests.delete(req);
        if (this.#closing && state.requests.size === 0) socket.destroySoon();
        else if (state.requests.size === 0) this.#armReadTimer(socket, state);
      });
    });
  }

  /** Serves `socket` (plain, or TLS after ALPN chose http/1.1) with the server. */
  accept(socket: Socket): void {
    const state: ConnectionState = { requests: new Map(), timer: undefined };
    this.#connections.set(socket, state);
    this.#armReadTimer(socket, state);
    socket.once("close", () => {
      clearTimeout(state.timer);
      this.#connections.delete(socket);
    });
    this.server.emit("connection", socket);
  }

  /** Stops keep-alive: ends idle connections now and the others once their response is written. */
  endAll(): void {
    this.#closing = true;
    for (const [socket, state] of this.#connections) if (state.requests.size === 0) socket.destroySoon();
  }

  #armReadTimer(socket: Socket, state: ConnectionState): void {
    if (this.requestReadTimeoutMs <= 0) return;
    clearTimeout(state.timer);
    state.timer = setTimeout(() => this.#readTimedOut(socket, state), this.requestReadTimeoutMs);
    state.timer.unref();
  }

  #readTimedOut(socket: Socket, state: ConnectionState): void {
    // Requests received in full are being answered: the next one is timed once their responses end.
    const requests = [...state.requests];
    if (requests.length > 0 && requests.every(([req]) => req.complete)) return;
    const body = `request not received in full within ${durationText(this.requestReadTimeoutMs)}\n`;
    if (socket.writable && !requests.some(([, res]) => res.headersSent)) {
      socket.write(
        "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n" +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      socket.destroySoon();
    } else socket.destroy();
  }
}
