import { connect, createServer, type Socket } from "node:net";

/** A TCP proxy that can cut its target off; see {@link startSwitchableProxy}. */
export interface SwitchableProxy {
  readonly port: number;
  /** Destroys every open connection and resets new ones until {@link restore}: the target "goes down". */
  cut(): void;
  /** Forwards new connections again. */
  restore(): void;
}

/**
 * Listens on a free loopback port and forwards connections to `target` while up. Used to take a database
 * away from a running daemon (and bring it back) without touching the database server itself.
 */
export async function startSwitchableProxy(
  t: { teardown(fn: () => unknown): void },
  target: { host: string; port: number },
  up = true,
): Promise<SwitchableProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    if (!up) return client.destroy();
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return {
    port: typeof address === "object" && address !== null ? address.port : 0,
    cut() {
      up = false;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      up = true;
    },
  };
}
