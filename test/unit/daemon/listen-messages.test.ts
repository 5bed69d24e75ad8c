// The start-up lines about the daemon's ports: where the console is, and a listener that cannot open named by
// its setting (test/e2e/port-in-use.test.ts and test/e2e/first-run.test.ts run them in the daemon).
import t from "tap";
import { listeningAsSet } from "../../../src/daemon/listen-errors.js";
import { consoleUrl } from "../../../src/daemon/listeners.js";

t.test("the console's URL: a wildcard DEBUG_HOST is localhost, IPv6 goes in brackets", async (t) => {
  t.equal(consoleUrl("0.0.0.0", 6070), "http://localhost:6070/console");
  t.equal(consoleUrl("::", 6070), "http://localhost:6070/console");
  t.equal(consoleUrl("", 6071), "http://localhost:6071/console");
  t.equal(consoleUrl("127.0.0.1", 6070), "http://127.0.0.1:6070/console");
  t.equal(consoleUrl("::1", 6070), "http://[::1]:6070/console");
  t.equal(consoleUrl("rl.internal", 7000), "http://rl.internal:7000/console");
});

/** An error as `net.Server#listen` rejects with. */
function listenError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

t.test("EADDRINUSE and EACCES name the setting; anything else passes unchanged", async (t) => {
  t.equal(await listeningAsSet("PORT", "8080", Promise.resolve(8080)), 8080);
  await t.rejects(
    listeningAsSet(
      "GRPC_PORT",
      "8081",
      Promise.reject(listenError("EADDRINUSE", "listen EADDRINUSE: address already in use 0.0.0.0:8081")),
    ),
    {
      message:
        "GRPC_PORT 8081 is already in use (listen EADDRINUSE: address already in use 0.0.0.0:8081): stop the process listening there (another ratelimitd?) or set GRPC_PORT to a free port",
    },
  );
  await t.rejects(
    listeningAsSet(
      "GRPC_UDS",
      "/run/rl.sock",
      Promise.reject(listenError("EADDRINUSE", "listen EADDRINUSE: address already in use /run/rl.sock")),
    ),
    {
      message:
        "GRPC_UDS /run/rl.sock is already in use (listen EADDRINUSE: address already in use /run/rl.sock): stop the process listening there (another ratelimitd?) or set GRPC_UDS to a free path",
    },
  );
  await t.rejects(
    listeningAsSet(
      "PORT",
      "80",
      Promise.reject(listenError("EACCES", "listen EACCES: permission denied 0.0.0.0:80")),
    ),
    {
      message:
        "PORT 80 cannot be opened (listen EACCES: permission denied 0.0.0.0:80): ports below 1024 need privileges; set PORT to a port this user may open",
    },
  );
  const other = listenError("EADDRNOTAVAIL", "listen EADDRNOTAVAIL: address not available 10.9.9.9:6070");
  await t.rejects(listeningAsSet("DEBUG_PORT", "6070", Promise.reject(other)), other);
});
