// The users API is open by default (the case study shows no authentication), but never to changing or
// deleting an account that holds a capability: that takes HTTP Basic with an application password of a
// manage_options user, over REST, Connect and gRPC alike, whatever USERS_REQUIRE_AUTH says. No response
// ever shows a password, a hash or an application password.
import { join } from "node:path";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createConnectTransport } from "@connectrpc/connect-web";
import t from "tap";
import { SqlAuthStore } from "../../../src/auth/sql-auth-store.js";
import { SqliteDatabase } from "../../../src/database/sqlite-database.js";
import { UserService } from "../../../src/gen/ratelimitd/users/v1/users_pb.js";
import { startDaemon } from "../../helpers/daemon-process.js";
import { runCommand } from "../../helpers/run-command.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import {
  ADMIN,
  addApplicationPassword,
  basic,
  migrationsClient,
  migrationsEnv,
} from "../migrations/migrations-harness.js";

const AUTH_REQUIRED = {
  error:
    "Authentication required: use HTTP Basic with an application password of a user holding manage_options.",
};
const BAD_CREDENTIALS = { error: "Invalid e-mail address or application password." };
const FORBIDDEN = { error: "Sorry, you are not allowed to change or delete a user that holds capabilities." };
const DUPLICATE = { error: "User with that email already exists" };
const ADMIN_USER = { id: 1, name: "Administrator", email: ADMIN.email };
const BOB_SECRET = "bobsbobsbobsbobsbobsbobs";

const dir = t.testdir({ config: {} });
const file = join(dir, "ratelimitd.db");
const databaseUrl = `sqlite:${file}`;
const daemon = await startDaemon({ RUNTIME_ROOT: dir, ...migrationsEnv(databaseUrl) });
t.teardown(() => daemon.stop());
const db = await SqliteDatabase.open({ path: file });
t.teardown(() => db.close());

const anonymous = migrationsClient(daemon.httpPort, null);
const admin = migrationsClient(daemon.httpPort);
const bob = migrationsClient(daemon.httpPort, basic("bob@example.com", BOB_SECRET));
const wrong = migrationsClient(daemon.httpPort, basic(ADMIN.email, "not the application password"));

t.test("set-up: the bootstrapped administrator is user 1; Bob (2) and Carol (3) are ordinary", async (t) => {
  t.strictSame((await anonymous.get("/users/1")).json, ADMIN_USER);
  for (const [name, email] of [
    ["Bob", "bob@example.com"],
    ["Carol", "carol@example.com"],
  ]) {
    t.equal((await anonymous.call("PUT", "/users", { name, email, password: "pw" })).status, 200);
  }
  await addApplicationPassword(db, "bob@example.com", BOB_SECRET);
});

t.test("anonymous requests cannot delete or change the administrator", async (t) => {
  const attempts: [string, string, unknown][] = [
    ["DELETE", "/users/1", undefined],
    ["PATCH", "/users/1", { password: "taken over" }],
    ["PATCH", "/users/1", { email: "attacker@example.com" }],
    ["PATCH", "/users/1", { name: "Mallory" }],
    ["PATCH", "/users/1", "not even JSON"],
  ];
  for (const [method, path, body] of attempts) {
    const reply = await anonymous.call(method, path, body);
    t.strictSame([reply.status, reply.json], [401, AUTH_REQUIRED], `${method} ${JSON.stringify(body)}`);
    t.equal(reply.headers["www-authenticate"], 'Basic realm="ratelimitd"');
    t.equal(reply.headers["content-type"], "application/json");
  }
  t.strictSame((await anonymous.get("/users/1")).json, ADMIN_USER, "unchanged");
  t.equal((await admin.get("/migrations")).status, 200, "its application password still works");
  const listed = await runCommand("ratelimitd-admin", ["capability", "list", ADMIN.email], {
    DATABASE_URL: databaseUrl,
  });
  t.strictSame(listed, { code: 0, stdout: "manage_options\n", stderr: "" });
});

t.test("wrong credentials are 401; a user without manage_options is 403", async (t) => {
  const refused = await wrong.call("DELETE", "/users/1");
  t.strictSame([refused.status, refused.json], [401, BAD_CREDENTIALS]);
  t.equal(refused.headers["www-authenticate"], 'Basic realm="ratelimitd"');
  const forbidden = await bob.call("PATCH", "/users/1", { password: "taken over" });
  t.strictSame([forbidden.status, forbidden.json], [403, FORBIDDEN]);
  t.equal(((await anonymous.get("/users/1")).json as { email: string }).email, ADMIN.email, "unchanged");
});

t.test("any capability protects an account; with manage_options credentials it may change", async (t) => {
  await new SqlAuthStore(db).grant(3, "edit_posts", Date.now());
  const carol = await anonymous.call("DELETE", "/users/3");
  t.strictSame([carol.status, carol.json], [401, AUTH_REQUIRED]);
  const renamed = await admin.call("PATCH", "/users/3", { name: "Carol Ann" });
  t.strictSame(
    [renamed.status, renamed.json],
    [200, { id: 3, name: "Carol Ann", email: "carol@example.com" }],
  );
  const self = await admin.call("PATCH", "/users/1", { name: "Root" });
  t.strictSame([self.status, self.json], [200, { ...ADMIN_USER, name: "Root" }]);
  t.equal((await admin.call("PATCH", "/users/1", { name: "Administrator" })).status, 200);
});

t.test("ordinary accounts stay open, as the case study has them", async (t) => {
  const renamed = await anonymous.call("PATCH", "/users/2", { name: "Robert" });
  t.strictSame([renamed.status, renamed.json], [200, { id: 2, name: "Robert", email: "bob@example.com" }]);
  t.strictSame((await anonymous.call("DELETE", "/users/999")).status, 404);
  const dave = await anonymous.call("PUT", "/users", {
    name: "Dave",
    email: "dave@example.com",
    password: "pw",
  });
  t.equal((await anonymous.call("DELETE", `/users/${(dave.json as { id: number }).id}`)).status, 200);
});

t.test("no e-mail address can collide with or shadow the administrator's", async (t) => {
  for (const email of ["ADMIN@example.com", " admin@EXAMPLE.COM ", "Admin@Example.Com"]) {
    const created = await anonymous.call("PUT", "/users", { name: "Eve", email, password: "pw" });
    t.strictSame([created.status, created.json], [403, DUPLICATE], email);
    const moved = await anonymous.call("PATCH", "/users/2", { email });
    t.strictSame([moved.status, moved.json], [403, DUPLICATE], email);
  }
  t.equal((await admin.get("/migrations")).status, 200, "the administrator's login is still its own");
});

t.test("no response shows a password, a hash or an application password", async (t) => {
  const list = await anonymous.get("/users");
  t.equal(list.status, 200);
  for (const user of list.json as Record<string, unknown>[]) {
    t.strictSame(Object.keys(user).sort(), ["email", "id", "name"]);
  }
  t.strictSame((list.json as unknown[])[0], ADMIN_USER);
  const one = await anonymous.get("/users/1");
  const page = await anonymous.get("/users?limit=10&offset=0");
  for (const body of [list.body, one.body, page.body]) {
    t.notMatch(body, /scrypt|password|hash|abcd|bobsbobs/i);
  }
});

t.test("Connect and gRPC: the same protection on the UserService", async (t) => {
  const baseUrl = `http://127.0.0.1:${daemon.grpcPort}`;
  const transports: Record<string, Transport> = {
    Connect: createConnectTransport({ baseUrl }),
    gRPC: createGrpcTransport({ baseUrl }),
  };
  const refusal = async (call: Promise<unknown>) => {
    const error = await call.then(
      () => new Error("expected a refusal"),
      (e: unknown) => e,
    );
    if (!(error instanceof ConnectError)) throw error;
    return [Code[error.code], error.rawMessage];
  };
  const as = (authorization: string) => ({ headers: { authorization } });
  for (const [name, transport] of Object.entries(transports)) {
    const users = createClient(UserService, transport);
    const required = ["Unauthenticated", AUTH_REQUIRED.error];
    t.strictSame(await refusal(users.deleteUser({ id: 1n })), required, `${name}: delete`);
    t.strictSame(await refusal(users.updateUser({ id: 1n, password: "taken over" })), required, name);
    t.strictSame(await refusal(users.updateUser({ id: 1n, email: "attacker@example.com" })), required, name);
    t.strictSame(
      await refusal(users.updateUser({ id: 1n, name: "x" }, as(basic(ADMIN.email, "not the password")))),
      ["Unauthenticated", BAD_CREDENTIALS.error],
      name,
    );
    t.strictSame(
      await refusal(users.deleteUser({ id: 1n }, as(basic("bob@example.com", BOB_SECRET)))),
      ["PermissionDenied", FORBIDDEN.error],
      name,
    );
    t.strictSame(
      await refusal(users.createUser({ name: "Eve", email: "ADMIN@example.com", password: "pw" })),
      ["AlreadyExists", DUPLICATE.error],
      name,
    );
    const renamed = await users.updateUser(
      { id: 1n, name: `Root ${name}` },
      as(basic(ADMIN.email, ADMIN.password)),
    );
    t.strictSame([renamed.id, renamed.name, renamed.email], [1n, `Root ${name}`, ADMIN.email], name);
    t.equal((await users.getUser({ id: 1n })).email, ADMIN.email, `${name}: reading is open`);
  }
  t.equal((await admin.get("/migrations")).status, 200);
});

t.test("guesses at the administrator's credentials count against the failed-login throttle", async (t) => {
  await stayInsideWindow(60, 5);
  let reply = await wrong.call("DELETE", "/users/1");
  // The address has up to AUTH_FAILURES_PER_MINUTE (10) failures this minute, some used by the tests above.
  for (let i = 0; i < 10 && reply.status === 401; i++) reply = await wrong.call("DELETE", "/users/1");
  t.equal(reply.status, 429);
  t.strictSame(reply.json, { error: "Too many failed authentication attempts; try again later." });
  t.match(reply.headers["retry-after"], /^[1-9]\d?$/);
  const good = await admin.call("DELETE", "/users/1");
  t.equal(good.status, 429, "even with good credentials, until the minute ends");
  t.equal(((await anonymous.get("/users/1")).json as { email: string }).email, ADMIN.email, "unchanged");
});
