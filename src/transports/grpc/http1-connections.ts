import type { Server } from "node:http";
import type { Socket } from "node:net";

/**
 * The HTTP/1.1 connections of the gRPC port (Connect, gRPC-Web), handed to an `http.Server` that never
 * listens itself. Node tracks connections for `closeIdleConnections()` only on servers that listen, so
 * this does it: at shutdown, idle keep-alive connections end at once and busy ones after their response,
 * instead of lingering until the keep-alive timeout.
 */
export class Http1Connections {
  readonly #inFlight = new Map<Socket, number>();
  #closing = false;

  constructor(private readonly server: Server) {
    server.on("request", (req, res) => {
      const socket = req.socket;
      this.#inFlight.set(socket, (this.#inFlight.get(socket) ?? 0) + 1);
      res.once("close", () => {
        const left = (this.#inFlight.get(socket) ?? 1) - 1;
        this.#inFlight.set(socket, left);
        if (this.#closing && left === 0) socket.destroySoon();
      });
    });
  }

  /** Serves `socket` (plain, or TLS after ALPN chose http/1.1) with the server. */
  accept(socket: Socket): void {
    this.#inFlight.set(socket, 0);
    socket.once("close", () => this.#inFlight.delete(socket));
    this.server.emit("connection", socket);
  }

  /** Stops keep-alive: ends idle connections now and the others once their response is written. */
  endAll(): void {
    this.#closing = true;
    for (const [socket, inFlight] of this.#inFlight) if (inFlight === 0) socket.destroySoon();
  }
}
