// Users survive crashes and restarts; replicas on one PostgreSQL share them; a database outage is a 500
// for the users API and nothing else.
import { join } from "node:path";
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { createPostgresSchemaBehindProxy } from "../../helpers/postgres-behind-proxy.js";
import { createPostgresSchema } from "../../helpers/postgres-schema.js";
import { call } from "./users-api-cases.js";

const RULES =
  "domain: web\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000 }\n";
const dir = t.testdir({ config: { "rules.yaml": RULES } });
const create = (port: number, name: string, email: string) =>
  call(port, "PUT", "/users", { name, email, password: "pw" });
const decide = (port: number) =>
  call(port, "POST", "/json", { domain: "web", descriptors: [{ entries: [{ key: "k", value: "v" }] }] });

t.test("sqlite: a user acknowledged before kill -9 is there after restart", async (t) => {
  const file = join(t.testdirName, "users.db");
  t.testdir({});
  const env = { RUNTIME_ROOT: dir, DATABASE_URL: `sqlite:${file}` };
  const first = await startDaemon(env);
  t.equal((await create(first.httpPort, "Ann", "ann@example.com")).status, 200);
  t.equal((await create(first.httpPort, "Bob", "bob@example.com")).status, 200);
  t.equal((await call(first.httpPort, "DELETE", "/users/2")).status, 200);
  await first.stop("SIGKILL");
  const second = await startDaemon(env);
  t.teardown(() => second.stop());
  t.strictSame((await call(second.httpPort, "GET", "/users")).json, [
    { id: 1, name: "Ann", email: "ann@example.com" },
  ]);
  t.strictSame((await create(second.httpPort, "Cy", "cy@example.com")).json, {
    id: 3,
    name: "Cy",
    email: "cy@example.com",
  });
});

t.test("postgres: restart, and two daemons on one database", async (t) => {
  const schema = await createPostgresSchema(t);
  if (schema === undefined) return;
  const env = { RUNTIME_ROOT: dir, DATABASE_URL: schema.url };
  const [a, b] = await Promise.all([startDaemon(env), startDaemon(env)]);
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  t.strictSame((await create(a.httpPort, "Ann", "ann@example.com")).json, {
    id: 1,
    name: "Ann",
    email: "ann@example.com",
  });
  t.strictSame((await call(b.httpPort, "GET", "/users/1")).json, {
    id: 1,
    name: "Ann",
    email: "ann@example.com",
  });
  t.equal((await create(b.httpPort, "Other Ann", "ANN@example.com")).status, 403, "b sees a's e-mail");
  const raced = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      create(i % 2 ? a.httpPort : b.httpPort, `R${i}`, "race@example.com"),
    ),
  );
  t.same(raced.map((r) => r.status).sort(), [200, ...Array(19).fill(403)]);
  const winner = raced.find((r) => r.status === 200)?.json as { name: string };
  t.equal((await call(a.httpPort, "PATCH", "/users/1", { name: "Ann B" })).status, 200);
  t.strictSame((await call(b.httpPort, "GET", "/users/1")).json, {
    id: 1,
    name: "Ann B",
    email: "ann@example.com",
  });
  await a.stop("SIGKILL");
  const c = await startDaemon(env);
  t.teardown(() => c.stop());
  t.strictSame((await call(c.httpPort, "GET", "/users")).json, [
    { id: 1, name: "Ann B", email: "ann@example.com" },
    {
      id: 2,
      name: winner.name,
      email: "race@example.com",
    },
  ]);
});

t.test(
  "postgres outage: users API answers 500 server error, decisions go on, then it recovers",
  async (t) => {
    const database = await createPostgresSchemaBehindProxy(t);
    if (database === undefined) return;
    const { proxy, url } = database;
    const daemon = await startDaemon({ RUNTIME_ROOT: dir, DATABASE_URL: url });
    t.teardown(() => daemon.stop());
    t.equal((await create(daemon.httpPort, "Ann", "ann@example.com")).status, 200);
    proxy.cut();
    for (const [method, path, body] of [
      ["GET", "/users", undefined],
      ["GET", "/users/1", undefined],
      ["PUT", "/users", { name: "Bob", email: "bob@example.com", password: "pw" }],
      ["PATCH", "/users/1", { name: "X" }],
      ["DELETE", "/users/1", undefined],
    ] as const) {
      const reply = await call(daemon.httpPort, method, path, body);
      t.equal(reply.status, 500, `${method} ${path}`);
      t.strictSame(reply.json, { error: "server error" });
    }
    t.equal((await decide(daemon.httpPort)).status, 200, "rate-limit decisions are unaffected");
    t.match(daemon.logs(), /level=error msg="users API: GET \/users failed: DatabaseError: PostgreSQL: /);
    t.notMatch(daemon.logs(), /"pw"|password_hash/);
    proxy.restore();
    t.strictSame((await call(daemon.httpPort, "GET", "/users")).json, [
      { id: 1, name: "Ann", email: "ann@example.com" },
    ]);
  },
);

t.test(
  "postgres down at start-up: the daemon starts, and the users API comes up with the database",
  async (t) => {
    const database = await createPostgresSchemaBehindProxy(t, { up: false });
    if (database === undefined) return;
    const { proxy, url } = database;
    const daemon = await startDaemon({ RUNTIME_ROOT: dir, DATABASE_URL: url });
    t.teardown(() => daemon.stop());
    t.equal((await decide(daemon.httpPort)).status, 200);
    const down = await call(daemon.httpPort, "GET", "/users");
    t.equal(down.status, 500);
    t.strictSame(down.json, { error: "server error" });
    t.match(daemon.logs(), /level=error msg="database postgres:\/\/[^"]* unavailable, retrying in 1000 ms: /);
    proxy.restore();
    let reply = down;
    for (let i = 0; i < 100 && reply.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      reply = await call(daemon.httpPort, "GET", "/users");
    }
    t.equal(reply.status, 200);
    t.strictSame(reply.json, []);
  },
);
