import { connect, createServer, type Socket } from "node:net";

/** A TCP proxy that counts request/response turns; see {@link startRoundTripProxy}. */
export interface RoundTripProxy {
  readonly port: number;
  /** `127.0.0.1:<port>`, to use in place of the target's address. */
  readonly url: string;
  /** Client→server turns since start or the last {@link reset}, summed over all connections. */
  roundTrips(): number;
  /** Client connections accepted since start or the last {@link reset}. */
  connections(): number;
  /** Sets both counters to zero (connections stay open). */
  reset(): void;
  /** Stops listening and destroys every open connection; also done at the test's teardown. */
  close(): Promise<void>;
}

/**
 * Listens on a free loopback port and forwards every connection to `target`, both ways. A round trip is
 * counted each time a client starts sending again after the server answered: per connection, the first
 * client chunk counts, and a later one counts only if a server→client chunk was forwarded since. A
 * pipelined batch sent in one write is therefore one round trip, however many replies it gets.
 */
export async function startRoundTripProxy(
  t: { teardown(fn: () => unknown): void },
  target: { host: string; port: number },
): Promise<RoundTripProxy> {
  let turns = 0;
  let accepted = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    accepted++;
    const upstream = connect(target.port, target.host);
    let serverAnsweredSinceLastTurn = true;
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      // A reset on either side ends the pair; the peer sees its connection close, as without a proxy.
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on("data", (chunk: Buffer) => {
      if (serverAnsweredSinceLastTurn) turns++;
      serverAnsweredSinceLastTurn = false;
      if (!upstream.write(chunk)) client.pause();
    });
    upstream.on("data", (chunk: Buffer) => {
      serverAnsweredSinceLastTurn = true;
      if (!client.write(chunk)) upstream.pause();
    });
    upstream.on("drain", () => client.resume());
    client.on("drain", () => upstream.resume());
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (server.listening) server.close(() => resolve());
      else resolve();
    });
  t.teardown(close);
  return {
    port,
    url: `127.0.0.1:${port}`,
    roundTrips: () => turns,
    connections: () => accepted,
    reset: () => {
      turns = 0;
      accepted = 0;
    },
    close,
  };
}
