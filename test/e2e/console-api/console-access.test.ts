// Who may do what through the console (README "Operator console"): reading is open; signing in and every
// users or migrations call need an application password of a `manage_options` user, whatever
// USERS_REQUIRE_AUTH says; a 401 never challenges (no browser prompt, no remembered credentials); anything
// that changes state must carry the console's header and a JSON body and come from this origin.
import { join } from "node:path";
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { httpRequest } from "../../helpers/http-request.js";
import { adminCli } from "../admin-cli/admin-cli-harness.js";
import { ADMIN, basic, migrationsEnv } from "../migrations/migrations-harness.js";

const REQUIRED =
  '{"error":"Authentication required: use HTTP Basic with an application password of a user holding manage_options."}';
const WRONG = '{"error":"Invalid e-mail address or application password."}';
const CROSS_SITE = '{"error":"Cross-site request refused."}';
const AS_ADMIN = basic(ADMIN.email, ADMIN.password);
const FROM_CONSOLE = { "x-ratelimitd-console": "1", "content-type": "application/json" };

const daemon = await startDaemon({
  RUNTIME_ROOT: t.testdir({ config: { "r.yaml": "domain: d\ndescriptors:\n  - key: k\n" } }),
  ...migrationsEnv("sqlite::memory:", { AUTH_FAILURES_PER_MINUTE: "3" }),
});
t.teardown(() => daemon.stop());
const call = (path: string, method: string, headers: Record<string, string>, body?: unknown) =>
  httpRequest(daemon.debugPort, path, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

t.test("state changes from another site are refused before credentials are looked at", async (t) => {
  // Wrong credentials throughout: were they checked, the failed-login throttle (3 a minute) would lock the
  // administrator out, and the signed-in test below would get 429.
  const AS_ADMIN = basic(ADMIN.email, "a guess");
  const user = { name: "Eve", email: "eve@example.com", password: "pw" };
  const cases: [string, Record<string, string>][] = [
    ["no console header", { authorization: AS_ADMIN, "content-type": "application/json" }],
    [
      "the header with another value",
      { ...FROM_CONSOLE, "x-ratelimitd-console": "yes", authorization: AS_ADMIN },
    ],
    [
      "a form's content type",
      { ...FROM_CONSOLE, "content-type": "application/x-www-form-urlencoded", authorization: AS_ADMIN },
    ],
    ["text/plain", { ...FROM_CONSOLE, "content-type": "text/plain", authorization: AS_ADMIN }],
    ["another origin", { ...FROM_CONSOLE, origin: "http://evil.example", authorization: AS_ADMIN }],
    [
      "a look-alike origin",
      {
        ...FROM_CONSOLE,
        origin: `http://127.0.0.1:${daemon.debugPort}.evil.example`,
        authorization: AS_ADMIN,
      },
    ],
    ["a cross-site fetch", { ...FROM_CONSOLE, "sec-fetch-site": "cross-site", authorization: AS_ADMIN }],
    ["a same-site fetch", { ...FROM_CONSOLE, "sec-fetch-site": "same-site", authorization: AS_ADMIN }],
  ];
  for (const [why, headers] of cases) {
    for (const [method, path, body] of [
      ["PUT", "/console/api/users", user],
      ["POST", "/console/api/migrations/three-items/run", {}],
      ["DELETE", "/console/api/users/1", undefined],
      ["POST", "/console/api/session", {}],
    ] as const) {
      const reply = await call(path, method, headers, body);
      t.equal(reply.status, 403, `${why}: ${method} ${path}`);
      t.equal(reply.body, CROSS_SITE, `${why}: ${method} ${path}`);
    }
  }
  const users = await call("/console/api/users", "GET", {
    authorization: basic(ADMIN.email, ADMIN.password),
  });
  t.strictSame(
    JSON.parse(users.body).map((u: { email: string }) => u.email),
    [ADMIN.email],
    "nothing was created",
  );
  const runs = await call("/console/api/migrations/three-items/executions", "GET", {
    authorization: basic(ADMIN.email, ADMIN.password),
  });
  t.equal(runs.body, "[]", "nothing was run");
});

t.test("without credentials: 401 everywhere, with the API's body and no challenge", async (t) => {
  for (const [method, path, body, expected] of [
    ["GET", "/console/api/users", undefined, REQUIRED],
    ["PUT", "/console/api/users", { name: "A", email: "a@example.com", password: "p" }, REQUIRED],
    ["DELETE", "/console/api/users/1", undefined, REQUIRED],
    ["POST", "/console/api/session", {}, REQUIRED],
    ["GET", "/console/api/migrations", undefined, null],
    ["POST", "/console/api/migrations/three-items/run", {}, null],
  ] as const) {
    const reply = await call(path, method, method === "GET" ? {} : FROM_CONSOLE, body);
    t.equal(reply.status, 401, `${method} ${path}`);
    t.equal(reply.headers["www-authenticate"], undefined, `${method} ${path}: no challenge`);
    if (expected !== null) t.equal(reply.body, expected, `${method} ${path}`);
    else
      t.strictSame(JSON.parse(reply.body), {
        code: "migrations_unauthorized",
        success: false,
        message: "Authentication required: use HTTP Basic with an application password.",
      });
  }
  // The users API on the HTTP port is as open as before (USERS_REQUIRE_AUTH is off).
  t.equal((await httpRequest(daemon.httpPort, "/users")).status, 200);
});

t.test("signed in: the session, users created and deleted, a migration run with its logs", async (t) => {
  const signedIn = {
    ...FROM_CONSOLE,
    authorization: AS_ADMIN,
    origin: `http://127.0.0.1:${daemon.debugPort}`,
  };
  const session = await call("/console/api/session", "POST", signedIn, {});
  t.equal(session.status, 200);
  t.strictSame(JSON.parse(session.body), { userId: 1, email: ADMIN.email, capabilities: ["manage_options"] });
  const created = await call("/console/api/users", "PUT", signedIn, {
    name: "Ann Lee",
    email: "ann@example.com",
    password: "correct horse",
  });
  t.equal(created.status, 200);
  t.strictSame(JSON.parse(created.body), { id: 2, name: "Ann Lee", email: "ann@example.com" });
  const deleted = await call(
    "/console/api/users/2",
    "DELETE",
    { ...signedIn, "sec-fetch-site": "same-origin" },
    {},
  );
  t.equal(deleted.status, 200);
  t.equal((await httpRequest(daemon.httpPort, "/users/2")).status, 404);
  const run = await call("/console/api/migrations/three-items/run", "POST", signedIn, { "batch-size": 1 });
  t.equal(run.status, 200);
  const scheduled = JSON.parse(run.body);
  t.match(scheduled, { success: true, operation: "up", from_batch: 1, to_batch: 3, batch_size: 1 });
  let executions: { status: string; items_processed: number; items_total: number }[] = [];
  const deadline = Date.now() + 15_000;
  do {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const reply = await call("/console/api/migrations/three-items/executions", "GET", {
      authorization: AS_ADMIN,
    });
    executions = JSON.parse(reply.body);
  } while (executions[0]?.status !== "completed" && Date.now() < deadline);
  t.match(executions, [{ status: "completed", items_processed: 3, items_total: 3 }]);
  const logs = await call(
    `/console/api/executions/${scheduled.execution_id}/logs?order=ASC&type=info`,
    "GET",
    { authorization: AS_ADMIN },
  );
  t.equal(logs.status, 200);
  t.ok(JSON.parse(logs.body).length > 0, "the run logged");
  for (const entry of JSON.parse(logs.body)) t.equal(entry.type, "info");
});

t.test("wrong passwords: 401 without a challenge, then the failed-login throttle's 429", async (t) => {
  const wrong = { ...FROM_CONSOLE, authorization: basic(ADMIN.email, "not the password") };
  for (let i = 0; i < 3; i++) {
    const reply = await call("/console/api/session", "POST", wrong, {});
    t.equal(reply.status, 401);
    t.equal(reply.body, WRONG);
    t.equal(reply.headers["www-authenticate"], undefined);
  }
  const throttled = await call(
    "/console/api/session",
    "POST",
    { ...FROM_CONSOLE, authorization: AS_ADMIN },
    {},
  );
  t.equal(throttled.status, 429);
  t.equal(throttled.body, '{"error":"Too many failed authentication attempts; try again later."}');
  t.match(throttled.headers["retry-after"], /^\d+$/);
});

t.test(
  "POST /explain: curl, the CLI and the console's page may ask; pages of other sites may not",
  async (t) => {
    const body = { domain: "d", descriptors: [{ entries: [{ key: "k", value: "v" }] }] };
    const same = `http://127.0.0.1:${daemon.debugPort}`;
    for (const [why, headers, status] of [
      ["no browser headers", {}, 200],
      ["the console's page", { origin: same, "sec-fetch-site": "same-origin", ...FROM_CONSOLE }, 200],
      ["another origin", { origin: "http://evil.example", "content-type": "text/plain" }, 403],
      ["a cross-site fetch", { "sec-fetch-site": "cross-site", "content-type": "text/plain" }, 403],
    ] as const) {
      const reply = await call("/explain", "POST", headers, body);
      t.equal(reply.status, status, why);
      if (status === 403) t.equal(reply.body, CROSS_SITE, why);
      else t.equal(JSON.parse(reply.body).overallCode, "OK", why);
    }
  },
);

t.test("an application password of a user without manage_options: signed out everywhere (403)", async (t) => {
  const dir = t.testdir({ config: { "r.yaml": "domain: d\ndescriptors:\n  - key: k\n" } });
  const databaseUrl = `sqlite:${join(dir, "users.db")}`;
  const plain = await startDaemon({ RUNTIME_ROOT: dir, DATABASE_URL: databaseUrl });
  t.teardown(() => plain.stop());
  const created = await httpRequest(plain.httpPort, "/users", {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "Bob", email: "bob@example.com", password: "pw" }),
  });
  t.equal(created.status, 200);
  const secret = await adminCli({ DATABASE_URL: databaseUrl })(
    "app-password",
    "create",
    "bob@example.com",
    "console",
    "--json",
  );
  t.equal(secret.code, 0);
  const bob = basic("bob@example.com", (JSON.parse(secret.stdout) as { password: string }).password);
  const asBob = (path: string, method: string, body?: unknown) =>
    httpRequest(plain.debugPort, path, {
      method,
      headers: { ...FROM_CONSOLE, authorization: bob },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const session = await asBob("/console/api/session", "POST", {});
  t.equal(session.status, 403);
  t.equal(session.body, '{"error":"Sorry, you are not allowed to manage users."}');
  const users = await asBob("/console/api/users", "GET");
  t.equal(users.status, 403);
  t.equal(users.body, '{"error":"Sorry, you are not allowed to manage users."}');
  const deleted = await asBob("/console/api/users/1", "DELETE", {});
  t.equal(deleted.status, 403);
  const run = await asBob("/console/api/migrations/normalize-user-emails/run", "POST", {});
  t.equal(run.status, 403);
  t.match(JSON.parse(run.body), { code: "migrations_forbidden", success: false });
  const still = await httpRequest(plain.httpPort, "/users/1");
  t.equal(still.status, 200, "Bob is still there");
});
