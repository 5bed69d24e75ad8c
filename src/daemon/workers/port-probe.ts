import { createServer } from "node:net";
import { listeningAsSet } from "../listen-errors.js";

/**
 * Fails with the usual "already in use" error when something listens on `host:port`, before the workers
 * bind it with `reusePort`: a socket bound with SO_REUSEPORT by another process of the same user (a second
 * ratelimitd with WORKERS > 1 started by mistake) would otherwise share the port, and its connections,
 * without a word. A bind without `reusePort` fails on any socket bound there. Port 0 is not probed.
 */
export async function probePortFree(setting: string, host: string, port: number): Promise<void> {
  if (port === 0) return;
  const server = createServer();
  await listeningAsSet(
    setting,
    String(port),
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host, port }, () => resolve());
    }),
  );
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
