// A PostgreSQL outage while requests carry credentials: checking them needs the database, and that failure
// is each API's own 500 (users: `server error`; migrations: its error body), never the listener's plain
// text. Rate-limit decisions go on, and everything answers again once the database is back.
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { httpRequest } from "../../helpers/http-request.js";
import { createPostgresSchemaBehindProxy } from "../../helpers/postgres-behind-proxy.js";
import { migrationsClient, migrationsEnv } from "./migrations-harness.js";

const RULES =
  "domain: web\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000 }\n";

t.test("postgres outage: authenticated requests get each API's JSON 500", async (t) => {
  const database = await createPostgresSchemaBehindProxy(t);
  if (database === undefined) return;
  const { proxy, url } = database;
  const dir = t.testdir({ config: { "rules.yaml": RULES } });
  const daemon = await startDaemon({
    RUNTIME_ROOT: dir,
    ...migrationsEnv(url),
    USERS_REQUIRE_AUTH: "true",
  });
  t.teardown(() => daemon.stop());
  const api = migrationsClient(daemon.httpPort);
  t.equal((await api.get("/migrations")).status, 200);
  t.equal((await api.get("/users")).status, 200);

  proxy.cut();
  for (const [method, path] of [
    ["GET", "/migrations"],
    ["POST", "/migrations/one-batch/run"],
    ["GET", "/executions/1/logs"],
  ] as const) {
    const reply = await api.call(method, path);
    t.equal(reply.status, 500, `${method} ${path}`);
    t.equal(reply.headers["content-type"], "application/json");
    t.strictSame(reply.json, { code: "migrations_error", success: false, message: "Internal server error." });
  }
  for (const [method, path] of [
    ["GET", "/users"],
    ["GET", "/users/1"],
    ["DELETE", "/users/1"],
  ] as const) {
    const reply = await api.call(method, path);
    t.equal(reply.status, 500, `${method} ${path}`);
    t.equal(reply.headers["content-type"], "application/json");
    t.strictSame(reply.json, { error: "server error" });
  }
  const decision = await httpRequest(daemon.httpPort, "/json", {
    method: "POST",
    body: JSON.stringify({ domain: "web", descriptors: [{ entries: [{ key: "k", value: "v" }] }] }),
  });
  t.equal(decision.status, 200, "rate-limit decisions are unaffected");
  t.match(JSON.parse(decision.body), { overallCode: "OK" });
  t.match(
    daemon.logs(),
    /level=error msg="migrations API: GET \/ratelimitd\/migrations\/v1\/migrations failed: /,
  );
  t.match(daemon.logs(), /level=error msg="users API: GET \/users failed: /);

  proxy.restore();
  t.equal((await api.get("/migrations")).status, 200);
  t.equal((await api.get("/users")).status, 200);
});
