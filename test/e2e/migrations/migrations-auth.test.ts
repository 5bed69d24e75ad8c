// Application passwords: throttling of failed attempts by the engine itself, revocation, USERS_REQUIRE_AUTH,
// a bad operator module, and the MigrationService over Connect and gRPC.
import { join } from "node:path";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createConnectTransport } from "@connectrpc/connect-web";
import t from "tap";
import { SqlAuthStore } from "../../../src/auth/sql-auth-store.js";
import { SqliteDatabase } from "../../../src/database/sqlite-database.js";
import { MigrationService } from "../../../src/gen/ratelimitd/migrations/v1/migrations_pb.js";
import { UserService } from "../../../src/gen/ratelimitd/users/v1/users_pb.js";
import { runDaemonToExit, startDaemon } from "../../helpers/daemon-process.js";
import { httpRequest } from "../../helpers/http-request.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import {
  ADMIN,
  addApplicationPassword,
  BASE,
  basic,
  migrationsClient,
  migrationsEnv,
} from "./migrations-harness.js";

const dir = t.testdir({ config: {}, data: {} });
const file = join(dir, "data", "ratelimitd.db");
const daemon = await startDaemon({
  RUNTIME_ROOT: dir,
  ...migrationsEnv(`sqlite:${file}`),
  AUTH_FAILURES_PER_MINUTE: "3",
  USERS_REQUIRE_AUTH: "true",
});
t.teardown(() => daemon.stop());
const db = await SqliteDatabase.open({ path: file });
t.teardown(() => db.close());
const admin = migrationsClient(daemon.httpPort);

t.test("USERS_REQUIRE_AUTH: the users API needs manage_options credentials too", async (t) => {
  const anonymous = await migrationsClient(daemon.httpPort, null).call("GET", "/users");
  t.equal(anonymous.status, 401);
  t.equal(anonymous.headers["www-authenticate"], 'Basic realm="ratelimitd"');
  t.strictSame(anonymous.json, {
    error:
      "Authentication required: use HTTP Basic with an application password of a user holding manage_options.",
  });
  const created = await admin.call("PUT", "/users", {
    name: "Ann",
    email: "ann@example.com",
    password: "pw",
  });
  t.equal(created.status, 200);
  await addApplicationPassword(db, "ann@example.com", "annsannsannsannsannsanns");
  const ann = migrationsClient(daemon.httpPort, basic("ann@example.com", "annsannsannsannsannsanns"));
  const forbidden = await ann.call("GET", "/users");
  t.equal(forbidden.status, 403);
  t.strictSame(forbidden.json, { error: "Sorry, you are not allowed to manage users." });
  t.equal((await admin.call("GET", "/users/openapi.json")).status, 200);
  t.equal(
    (await migrationsClient(daemon.httpPort, null).call("GET", "/users/openapi.json")).status,
    200,
    "the document is public",
  );
});

t.test("a revoked application password is refused", async (t) => {
  await addApplicationPassword(db, ADMIN.email, "secondsecondsecondsecond");
  const second = migrationsClient(daemon.httpPort, basic(ADMIN.email, "seco ndse cond seco ndse cond"));
  t.equal((await second.get("/migrations")).status, 200, "spaces are ignored");
  const auth = new SqlAuthStore(db);
  t.equal(await auth.revokeApplicationPassword(1, "test"), 1);
  const revoked = await second.get("/migrations");
  t.equal(revoked.status, 401);
  t.strictSame(revoked.json, {
    code: "migrations_unauthorized",
    success: false,
    message: "Invalid e-mail address or application password.",
  });
  const listed = await auth.applicationPasswordsOf(1);
  t.strictSame(
    listed.map((p) => p.name),
    ["bootstrap"],
  );
  t.type(listed[0]?.lastUsedAtMs, "number", "last use recorded");
  t.equal(listed[0]?.lastIp, "127.0.0.1");
});

t.test("failed attempts are throttled per address by the rate-limit engine", async (t) => {
  // Fresh minute window, so the count starts here (the earlier tests made one failure).
  const wrong = migrationsClient(daemon.httpPort, basic(ADMIN.email, "not the password at all"));
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await wrong.get("/migrations")).status);
  // At most three failures pass as 401 this minute (one came from the test before), then 429 for good.
  t.equal(statuses.at(-1), 429, `statuses ${statuses.join(",")}`);
  t.strictSame(statuses.slice(statuses.indexOf(429)), Array(4 - statuses.indexOf(429)).fill(429));
  t.ok(statuses.indexOf(429) <= 3);
  const throttled = await admin.get("/migrations");
  t.equal(throttled.status, 429, "even good credentials wait");
  t.ok(Number(throttled.headers["retry-after"]) >= 1 && Number(throttled.headers["retry-after"]) <= 60);
  t.strictSame(throttled.json, {
    code: "migrations_rate_limited",
    success: false,
    message: "Too many failed authentication attempts; try again later.",
  });
  const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
  t.match(stats, /^ratelimit\.service\.rate_limit\.ratelimitd_auth\.remote_address\.over_limit: [1-9]\d*$/m);
  t.match(stats, /^ratelimit\.service\.rate_limit\.ratelimitd_auth\.remote_address\.total_hits: [4-9]\d*$/m);
});

t.test("a bad operator migration stops start-up, naming the file", async (t) => {
  const modules = t.testdir({
    "ok.mjs":
      "export default { id: 'ok', label: 'x', description: 'x', tags: [], defaultBatchSize: 1, totalItems: () => 1, isApplicable: () => true, canRun: () => true, isDone: () => false, up: () => 1 };",
    "zz-broken.mjs": "export default { id: 'broken', label: 'x' };",
  });
  const broken = await runDaemonToExit({ RUNTIME_ROOT: dir, MIGRATIONS_DIR: modules });
  t.equal(broken.code, 1);
  t.match(
    broken.logs,
    `failed to start: migration module ${join(modules, "zz-broken.mjs")}: invalid migration definition: description must be a string`,
  );
  const syntax = t.testdir({ "bad-syntax.mjs": "export default {" });
  const crashed = await runDaemonToExit({ RUNTIME_ROOT: dir, MIGRATIONS_DIR: syntax });
  t.equal(crashed.code, 1);
  t.match(
    crashed.logs,
    `failed to start: migration module ${join(syntax, "bad-syntax.mjs")} failed to load: `,
  );
  const duplicate = t.testdir({
    "again.mjs":
      "export default { id: 'normalize-user-emails', label: 'x', description: 'x', tags: [], defaultBatchSize: 1, totalItems: () => 1, isApplicable: () => true, canRun: () => true, isDone: () => false, up: () => 1 };",
  });
  const twice = await runDaemonToExit({ RUNTIME_ROOT: dir, MIGRATIONS_DIR: duplicate });
  // The log line quotes the message, so its own quotes come escaped.
  t.match(
    twice.logs,
    `failed to start: ${join(duplicate, "again.mjs")}: duplicate migration id \\"normalize-user-emails\\"`,
  );
  const missing = await runDaemonToExit({ RUNTIME_ROOT: dir, MIGRATIONS_DIR: join(dir, "no-such-dir") });
  t.match(missing.logs, `failed to start: MIGRATIONS_DIR ${join(dir, "no-such-dir")}: ENOENT`);
});

t.test("MigrationService over Connect and gRPC: same answers, credentials in metadata", async (t) => {
  const baseUrl = `http://127.0.0.1:${daemon.grpcPort}`;
  // The address is throttled by now; a daemon of its own keeps this test independent.
  const fresh = await startDaemon({
    RUNTIME_ROOT: dir,
    ...migrationsEnv(`sqlite:${join(t.testdirName, "db")}`),
  });
  t.testdir({});
  t.teardown(() => fresh.stop());
  const freshUrl = `http://127.0.0.1:${fresh.grpcPort}`;
  const headers = { authorization: basic(ADMIN.email, ADMIN.password) };
  for (const [name, transport] of [
    ["Connect (fetch)", createConnectTransport({ baseUrl: freshUrl })],
    ["gRPC", createGrpcTransport({ baseUrl: freshUrl })],
  ] as const) {
    const client = createClient(MigrationService, transport);
    const anonymous = await client.listMigrations({}).catch((e: ConnectError) => e);
    t.equal((anonymous as ConnectError).code, Code.Unauthenticated, name);
    const list = await client.listMigrations({ tags: ["batches"] }, { headers });
    t.strictSame(
      list.migrations.map((m) => [m.id, m.totalBatches, m.status]),
      [["three-items", 3, list.migrations[0]?.status]],
    );
    const bad = await client
      .runMigration({ migrationId: "three-items", fromBatch: 3, toBatch: 2 }, { headers })
      .catch((e: ConnectError) => e);
    t.equal((bad as ConnectError).code, Code.InvalidArgument);
    t.equal(
      (bad as ConnectError).rawMessage,
      "Invalid parameter from-batch: must not be greater than to-batch (2).",
    );
    const unknown = await client
      .listExecutions({ migrationId: "nope" }, { headers })
      .catch((e: ConnectError) => e);
    t.equal((unknown as ConnectError).code, Code.NotFound);
    t.equal((unknown as ConnectError).rawMessage, "Migration with ID nope not found.");
    const scheduled = await client.runMigration({ migrationId: "one-batch" }, { headers });
    t.match(scheduled, {
      success: true,
      message: "Migration scheduled for execution.",
      operation: "up",
      fromBatch: 1,
      toBatch: 1,
      batchSize: 10,
    });
    const rest = migrationsClient(fresh.httpPort);
    await rest.waitFor("one-batch", Number(scheduled.executionId), ["completed"]);
    const executions = await client.listExecutions({ migrationId: "one-batch" }, { headers });
    const last = executions.executions.at(-1);
    t.match(last, {
      migrationId: "one-batch",
      operation: "up",
      status: "completed",
      itemsTotal: 4n,
      itemsProcessed: 1n,
    });
    t.match(last?.startDateGmt, /\+00:00$/);
    t.equal(last?.parentExecutionId, undefined);
    const rollback = await client.rollbackMigration({ migrationId: "one-batch" }, { headers });
    await rest.waitFor("one-batch", Number(rollback.executionId), ["reverted"]);
    const again = await client
      .rollbackMigration({ migrationId: "one-batch" }, { headers })
      .catch((e: ConnectError) => e);
    t.strictSame(
      [Code[(again as ConnectError).code], (again as ConnectError).rawMessage],
      [
        "FailedPrecondition",
        `Migration one-batch is already rolled back (execution ${rollback.executionId} reverted); run it again before another rollback.`,
      ],
      name,
    );
    const logs = await client.listLogs(
      { executionId: scheduled.executionId, order: "asc", orderBy: "id" },
      { headers },
    );
    t.strictSame(logs.logs[0]?.data, { from_batch: 1, to_batch: 1, batch_size: 10 });
    t.equal(logs.logs.at(-1)?.message, "Migration completed.");
    const badQuery = await client
      .listLogs({ executionId: scheduled.executionId, limit: 500 }, { headers })
      .catch((e: ConnectError) => e);
    t.equal(
      (badQuery as ConnectError).rawMessage,
      "Invalid parameter limit: must be an integer between 1 and 200.",
    );
  }
  // The first daemon blocks this address until its minute window ends, which may have come since the
  // test before: fail over Connect until it blocks again, then even good credentials are refused there.
  const users = createClient(UserService, createConnectTransport({ baseUrl }));
  const wrong = { authorization: basic(ADMIN.email, "not the password at all") };
  // Blocking and the check after it must fall in one minute window, or the block ends between them.
  await stayInsideWindow(60, 5);
  let code: Code | undefined;
  for (let i = 0; i < 5 && code !== Code.ResourceExhausted; i++) {
    code = ((await users.listUsers({}, { headers: wrong }).catch((e: ConnectError) => e)) as ConnectError)
      .code;
  }
  t.equal(code, Code.ResourceExhausted, "failed attempts over Connect are throttled too");
  const refused = await users.listUsers({}, { headers }).catch((e: ConnectError) => e);
  t.equal(
    (refused as ConnectError).code,
    Code.ResourceExhausted,
    "USERS_REQUIRE_AUTH on the throttled daemon, over Connect too",
  );
  t.equal(BASE, "/ratelimitd/migrations/v1");
});
