// README "Migrations API": a second daemon started while the quick-start one runs ends at once, saying which
// address is taken (the README tells to stop the first one before starting it again with ADMIN_*).
import t from "tap";
import { runDaemonToExit, startDaemon } from "../helpers/daemon-process.js";

t.test("a daemon whose ports are taken exits 1 naming the address", async (t) => {
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
  t.match(
    second.logs,
    `level=error msg="failed to start: listen EADDRINUSE: address already in use 127.0.0.1:${first.debugPort}"\n`,
  );
});
