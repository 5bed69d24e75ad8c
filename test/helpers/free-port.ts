import { createServer } from "node:net";

// Ports handed out by this process; the kernel may offer a just-closed port again, and two servers started
// from the same test must not race for it.
const handedOut = new Set<number>();

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now, never the same one twice per process.
 * The port is released before this resolves, so another process could still take it: callers that bind
 * it later should report "address in use" clearly (the Redis helpers retry on a fresh port).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await listenOnce();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error("freePort: the kernel kept offering ports this process already handed out");
}

function listenOnce(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("freePort: no port assigned"))));
    });
  });
}
