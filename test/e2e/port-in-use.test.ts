// A daemon whose port is taken (a second `npm start` while the first runs, docs/migrations-api.md) ends at
// once, naming the setting that chose the port as well as the address.
import { createServer, type Server } from "node:net";
import t, { type Test } from "tap";
import { runDaemonToExit, startDaemon } from "../helpers/daemon-process.js";

/** A plain TCP listener on a free loopback port, closed when the test ends. */
async function occupy(t: Test): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

const inUse = (setting: string, port: number) =>
  `level=error msg="failed to start: ${setting} ${port} is already in use (listen EADDRINUSE: address already in use 127.0.0.1:${port}): stop the process listening there (another ratelimitd?) or set ${setting} to a free port"\n`;

t.test("a second daemon on the first one's ports exits 1 naming DEBUG_PORT (opened first)", async (t) => {
  const rules = t.testdir({ config: {} });
  const first = await startDaemon({ RUNTIME_ROOT: rules });
  t.teardown(() => first.stop());
  const second = await runDaemonToExit({
    RUNTIME_ROOT: rules,
    DEBUG_PORT: String(first.debugPort),
    GRPC_PORT: String(first.grpcPort),
    PORT: String(first.httpPort),
  });
  t.equal(second.code, 1);
  t.match(second.logs, inUse("DEBUG_PORT", first.debugPort));
});

for (const setting of ["GRPC_PORT", "PORT"] as const) {
  t.test(`a taken ${setting} is named`, async (t) => {
    const port = await occupy(t);
    const exited = await runDaemonToExit({
      RUNTIME_ROOT: t.testdir({ config: {} }),
      [setting]: String(port),
    });
    t.equal(exited.code, 1);
    t.match(exited.logs, inUse(setting, port));
  });
}

t.test("a taken PROMETHEUS_ADDR is named", async (t) => {
  const port = await occupy(t);
  const exited = await runDaemonToExit({
    RUNTIME_ROOT: t.testdir({ config: {} }),
    USE_PROMETHEUS: "true",
    PROMETHEUS_ADDR: `127.0.0.1:${port}`,
  });
  t.equal(exited.code, 1);
  t.match(
    exited.logs,
    `level=error msg="failed to start: PROMETHEUS_ADDR 127.0.0.1:${port} is already in use (listen EADDRINUSE: address already in use 127.0.0.1:${port}): stop the process listening there (another ratelimitd?) or set PROMETHEUS_ADDR to a free port"\n`,
  );
});
