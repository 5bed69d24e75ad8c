// The test migrations' record() (test/fixtures/migrations/_lib/runs.mjs) on PostgreSQL when two batches create
// test_runs at the same time, as two daemons' first batches do in migrations-crash.test.ts: the second one
// must record its batch, not fail on the other's table (a unique violation on pg_type).
import t from "tap";
import { PostgresDatabase } from "../../../src/database/postgres-database.js";
import type { MigrationContext } from "../../../src/migrations/migration.js";
import { createPostgresSchema } from "../../helpers/postgres-schema.js";

type RecordBatch = (
  ctx: MigrationContext,
  migration: string,
  operation: string,
  batch: number,
) => Promise<void>;
const runs = new URL("../../fixtures/migrations/_lib/runs.mjs", import.meta.url).href;
const { record } = (await import(runs)) as { record: RecordBatch };

t.test("postgres: a batch creating test_runs while another one's creation is uncommitted", async (t) => {
  const schema = await createPostgresSchema(t);
  if (schema === undefined) return;
  const db = new PostgresDatabase({ connectionString: schema.url, onIdleError: () => {} });
  t.teardown(() => db.close());
  let commitFirst = () => {};
  const firstMayCommit = new Promise<void>((resolve) => (commitFirst = resolve));
  let firstCreated = () => {};
  const created = new Promise<void>((resolve) => (firstCreated = resolve));
  const first = db.transaction(async (tx) => {
    await record({ db: tx, dialect: "postgres" }, "first", "up", 1);
    firstCreated();
    await firstMayCommit;
  });
  await created;
  const second = db.transaction((tx) => record({ db: tx, dialect: "postgres" }, "second", "up", 1));
  // The first commits only once the second's CREATE TABLE waits for it (the race two daemons can run into).
  for (;;) {
    const waiting = await schema.query(
      "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'CREATE TABLE IF NOT EXISTS test_runs%'",
    );
    if (waiting.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  commitFirst();
  await first;
  await t.resolves(second, "the second batch records too");
  t.strictSame(await schema.query("SELECT migration, operation, batch FROM test_runs ORDER BY migration"), [
    { migration: "first", operation: "up", batch: 1 },
    { migration: "second", operation: "up", batch: 1 },
  ]);
});
