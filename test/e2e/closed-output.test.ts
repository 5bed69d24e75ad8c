// Every command ends quietly when its output is closed (`ratelimitd-admin migrations logs 4 | head`): the
// reader of its stdout (or stderr) goes away before it writes, and it must end with its normal exit code,
// without an unhandled EPIPE and its stack trace; the servers keep serving.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import t from "tap";
import { distEntry, startDaemon } from "../helpers/daemon-process.js";
import { freePort } from "../helpers/free-port.js";
import { httpRequest } from "../helpers/http-request.js";
import { runCommand } from "../helpers/run-command.js";
import { eventually, rlconfig, xdsEnv } from "../helpers/xds-fixtures.js";

const RULES =
  "domain: closed\ndescriptors:\n  - key: k\n    rate_limit: { unit: day, requests_per_unit: 5 }\n";

/** Spawns a built command with its `closed` stream's reading end closed at once, before it can write. */
function spawnWithClosed(
  closed: "stdout" | "stderr",
  name: string,
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; other: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [distEntry(name), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", ...env },
  });
  child[closed]!.destroy();
  const open = closed === "stdout" ? child.stderr! : child.stdout!;
  let text = "";
  open.on("data", (chunk: Buffer) => (text += chunk));
  const exit = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, other: () => text, exit };
}

/** Runs a command to its end with stdout closed; resolves with its exit code and what it wrote to stderr. */
async function runWithClosedStdout(name: string, args: string[], env: Record<string, string> = {}) {
  const run = spawnWithClosed("stdout", name, args, env);
  const code = await run.exit;
  return { code, stderr: run.other() };
}

t.test("one-shot commands: their normal exit code and nothing on stderr", async (t) => {
  const dir = t.testdir({ rules: { config: { "r.yaml": RULES } }, database: {} });
  const rules = join(dir, "rules");
  const daemon = await startDaemon({ RUNTIME_ROOT: rules });
  t.teardown(() => daemon.stop());
  const database = { DATABASE_URL: `sqlite:${join(dir, "database", "users.db")}` };
  // An execution with log entries for `migrations logs 1`.
  t.equal(
    (await runCommand("ratelimitd-admin", ["migrations", "run", "normalize-user-emails"], database)).code,
    0,
  );
  const cases: [string, string[], Record<string, string>][] = [
    ["ratelimitd", ["--help"], {}],
    [
      "ratelimit-client",
      ["-dial_string", `127.0.0.1:${daemon.grpcPort}`, "-domain", "closed", "-descriptors", "k=v"],
      {},
    ],
    [
      "ratelimit-client",
      ["-dial_string", `127.0.0.1:${daemon.grpcPort}`, "-domain", "closed", "-descriptors", "k=v", "-json"],
      {},
    ],
    ["ratelimit-config-check", ["-config_dir", join(rules, "config")], {}],
    ["ratelimitd-admin", ["migrations", "logs", "1"], database],
    ["ratelimitd-admin", ["migrations", "list", "--json"], database],
    ["ratelimitd-admin", ["--help"], {}],
  ];
  for (const [name, args, env] of cases) {
    const run = await runWithClosedStdout(name, args, env);
    t.equal(run.code, 0, `${name} ${args.join(" ")}: exit code`);
    t.equal(run.stderr, "", `${name} ${args.join(" ")}: nothing on stderr (no stack trace)`);
  }
  const invalid = await runWithClosedStdout("ratelimit-config-check", ["-config_dir", rules]);
  t.equal(invalid.code, 1, "a failed check still exits 1 (a subdirectory is not a rule file)");
  t.equal(invalid.stderr, "");
});

t.test("ratelimitd-admin migrations run: the batches are still worked through", async (t) => {
  const database = { DATABASE_URL: `sqlite:${join(t.testdir({}), "users.db")}` };
  const run = await runWithClosedStdout(
    "ratelimitd-admin",
    ["migrations", "run", "collapse-user-name-whitespace"],
    database,
  );
  t.equal(run.code, 0);
  t.equal(
    run.stderr,
    "execution 1: collapse-user-name-whitespace up, batches 1-1, batch size 100\n" +
      "execution 1: batch 1/1 done, 0/0 items\n",
    "its progress on stderr, no stack trace",
  );
  const executions = await runCommand(
    "ratelimitd-admin",
    ["migrations", "executions", "collapse-user-name-whitespace", "--json"],
    database,
  );
  t.equal(JSON.parse(executions.stdout)[0]?.status, "completed");
});

t.test("ratelimitd keeps serving when its log reader goes away, and stops cleanly", async (t) => {
  const [http, grpc, debug] = [await freePort(), await freePort(), await freePort()];
  const daemon = spawnWithClosed("stderr", "ratelimitd", [], {
    BACKEND_TYPE: "memory",
    HOST: "127.0.0.1",
    PORT: String(http),
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: String(grpc),
    DEBUG_HOST: "127.0.0.1",
    DEBUG_PORT: String(debug),
    USE_STATSD: "false",
    RUNTIME_WATCH_ROOT: "false",
    RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }),
    DATABASE_URL: "sqlite::memory:",
    // A log line per request: every request writes to the closed stream.
    LOG_LEVEL: "debug",
  });
  t.teardown(() => daemon.child.kill("SIGKILL"));
  await eventually("healthy", async () => {
    const reply = await httpRequest(http, "/healthcheck").catch(() => undefined);
    return reply?.status === 200;
  });
  const body = JSON.stringify({ domain: "closed", descriptors: [{ entries: [{ key: "k", value: "v" }] }] });
  for (let i = 0; i < 3; i++) {
    const reply = await httpRequest(http, "/json", { method: "POST", body });
    t.equal(reply.status, 200, `decision ${i + 1} answered`);
  }
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exit, 0, "a graceful stop");
  t.equal(daemon.other(), "", "nothing on stdout either");
});

t.test("ratelimit-xds-server keeps serving when its log reader goes away", async (t) => {
  const port = await freePort();
  const server = spawnWithClosed("stderr", "ratelimit-xds-server", [
    "-config_dir",
    t.testdir({ "a.yaml": RULES }),
    "-port",
    String(port),
  ]);
  t.teardown(() => server.child.kill("SIGKILL"));
  const daemon = await startDaemon(xdsEnv(port));
  t.teardown(() => daemon.stop());
  await eventually("rules served", async () => (await rlconfig(daemon.debugPort)).startsWith("closed.k:"));
  t.pass("the daemon got the rules after the server's log lines failed to write");
  server.child.kill("SIGTERM");
  t.equal(await server.exit, 0, "stops on SIGTERM as usual");
  t.equal(server.other(), "", "nothing on stdout");
});
