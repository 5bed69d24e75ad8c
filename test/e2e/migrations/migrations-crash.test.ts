// kill -9 in the middle of an execution: after a restart it finishes, no batch runs twice or is lost, and
// the logs tell what happened. Then two daemons on one PostgreSQL: each batch runs exactly once.
import { join } from "node:path";
import t, { type Test } from "tap";
import { PostgresDatabase } from "../../../src/database/postgres-database.js";
import type { SqlDatabase } from "../../../src/database/sql-database.js";
import { SqliteDatabase } from "../../../src/database/sqlite-database.js";
import { startDaemon } from "../../helpers/daemon-process.js";
import { createPostgresSchema } from "../../helpers/postgres-schema.js";
import { migrationsClient, migrationsEnv, runsOf } from "./migrations-harness.js";

const SLOW = { TEST_SLOW_BATCH_MS: "700" };

async function crashAndResume(t: Test, databaseUrl: string, db: SqlDatabase): Promise<void> {
  const dir = t.testdir({ config: {} });
  const env = { RUNTIME_ROOT: dir, ...migrationsEnv(databaseUrl), ...SLOW };
  const first = await startDaemon(env);
  const api = migrationsClient(first.httpPort);
  const id = ((await api.post("/migrations/slow/run")).json as { execution_id: number }).execution_id;
  // Wait until two batches are done and the third is under way, then pull the plug.
  for (;;) {
    const [execution] = (await api.get("/migrations/slow/executions")).json as { items_processed: number }[];
    if ((execution?.items_processed ?? 0) >= 2) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await first.stop("SIGKILL");
  const before = await runsOf(db, "slow");
  t.ok(before.length >= 2 && before.length < 6, `killed after ${before.length} batches`);

  const second = await startDaemon(env);
  t.teardown(() => second.stop());
  const resumed = migrationsClient(second.httpPort);
  const done = await resumed.waitFor("slow", id, ["completed", "failed"], 60_000);
  t.match(done, { status: "completed", items_total: 6, items_processed: 6 });
  t.strictSame(await runsOf(db, "slow"), ["up:1", "up:2", "up:3", "up:4", "up:5", "up:6"], "each batch once");
  const logs = (await resumed.get(`/executions/${id}/logs?order=asc&order-by=id&limit=200`)).json as {
    message: string;
  }[];
  const processed = logs.map((l) => l.message).filter((m) => m.startsWith("Batch "));
  t.strictSame(
    processed,
    [1, 2, 3, 4, 5, 6].map((b) => `Batch ${b} of 6 processed: 1 items.`),
  );
  t.equal(logs.at(-1)?.message, "Migration completed.");
}

t.test("sqlite: kill -9 mid-execution, restart, it completes", async (t) => {
  const file = join(t.testdir({}), "ratelimitd.db");
  const db = await SqliteDatabase.open({ path: file });
  t.teardown(() => db.close());
  await crashAndResume(t, `sqlite:${file}`, db);
});

t.test("postgres: kill -9 mid-execution, restart, it completes", async (t) => {
  const schema = await createPostgresSchema(t);
  if (schema === undefined) return;
  const db = new PostgresDatabase({ connectionString: schema.url, onIdleError: () => {} });
  t.teardown(() => db.close());
  await crashAndResume(t, schema.url, db);
});

t.test("postgres: two daemons, one database: every batch runs exactly once", async (t) => {
  const schema = await createPostgresSchema(t);
  if (schema === undefined) return;
  const db = new PostgresDatabase({ connectionString: schema.url, onIdleError: () => {} });
  t.teardown(() => db.close());
  const dir = t.testdir({ config: {} });
  const env = { RUNTIME_ROOT: dir, ...migrationsEnv(schema.url), TEST_SLOW_BATCH_MS: "150" };
  const [a, b] = await Promise.all([startDaemon(env), startDaemon(env)]);
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  const [apiA, apiB] = [migrationsClient(a.httpPort), migrationsClient(b.httpPort)];
  const ids = {
    slow: ((await apiA.post("/migrations/slow/run")).json as { execution_id: number }).execution_id,
    "three-items": ((await apiB.post("/migrations/three-items/run")).json as { execution_id: number })
      .execution_id,
    "one-batch": ((await apiA.post("/migrations/one-batch/run")).json as { execution_id: number })
      .execution_id,
  };
  t.equal(
    (await apiB.post("/migrations/slow/run")).status,
    409,
    "the other replica sees the active execution",
  );
  for (const [migration, id] of Object.entries(ids)) {
    t.match(await apiB.waitFor(migration, id, ["completed", "failed"]), { status: "completed" }, migration);
  }
  t.strictSame(await runsOf(db, "slow"), ["up:1", "up:2", "up:3", "up:4", "up:5", "up:6"]);
  t.strictSame(await runsOf(db, "three-items"), ["up:1", "up:2", "up:3"]);
  t.strictSame(await runsOf(db, "one-batch"), ["up:1"]);
  const jobs = await db.query<{ n: number }>(
    "SELECT COUNT(*) AS n FROM migration_jobs WHERE state <> 'done'",
  );
  t.same(jobs.rows, [{ n: 0 }], "no job left behind");
});
