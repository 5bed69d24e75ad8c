import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel } from "node:worker_threads";
import t, { type Test } from "tap";
import { PostgresDatabase } from "../../../src/database/postgres-database.js";
import { RelayedDatabase, serveRelayedDatabase } from "../../../src/database/relayed-database.js";
import { applySchemaSteps, type SchemaStep } from "../../../src/database/schema-steps.js";
import type { SqlDatabase } from "../../../src/database/sql-database.js";
import { SqliteDatabase } from "../../../src/database/sqlite-database.js";
import { DatabaseError } from "../../../src/errors.js";
import { createPostgresSchema } from "../../helpers/postgres-schema.js";

const STEPS: SchemaStep[] = [
  {
    id: "things-1",
    sqlite: "CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, size INTEGER)",
    postgres: "CREATE TABLE things (id BIGINT PRIMARY KEY, name TEXT NOT NULL UNIQUE, size BIGINT)",
  },
];

type Open = (t: Test) => Promise<SqlDatabase | undefined>;

const databases: Record<string, Open> = {
  "sqlite file": async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "rl-sqlite-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const db = await SqliteDatabase.open({ path: join(dir, "nested", "db.sqlite") });
    t.teardown(() => db.close());
    return db;
  },
  "sqlite memory": async (t) => {
    const db = await SqliteDatabase.open({ path: ":memory:" });
    t.teardown(() => db.close());
    return db;
  },
  // What a worker thread of WORKERS > 1 uses (docs/workers.md): every statement relayed to the owner's
  // connection over a MessagePort.
  "sqlite relayed over a MessagePort": async (t) => {
    const owner = await SqliteDatabase.open({ path: ":memory:" });
    const channel = new MessageChannel();
    serveRelayedDatabase(owner, channel.port1);
    const db = new RelayedDatabase("sqlite", channel.port2);
    t.teardown(async () => {
      await db.close();
      await owner.close();
    });
    return db;
  },
  postgres: async (t) => {
    const schema = await createPostgresSchema(t);
    if (schema === undefined) return undefined;
    const db = new PostgresDatabase({ connectionString: schema.url, onIdleError: () => {} });
    t.teardown(() => db.close());
    return db;
  },
};

for (const [kind, open] of Object.entries(databases)) {
  t.test(kind, async (t) => {
    const db = await open(t);
    if (db === undefined) return;
    t.same(await applySchemaSteps(db, STEPS, () => 5), ["things-1"], "the step runs once");
    t.same(await applySchemaSteps(db, STEPS, () => 6), [], "and is recorded");
    t.same((await db.query("SELECT id, applied_at_ms FROM ratelimitd_schema")).rows, [
      { id: "things-1", applied_at_ms: 5 },
    ]);

    t.test("query: parameters, RETURNING, row counts, integers as numbers", async (t) => {
      const inserted = await db.query(
        "INSERT INTO things (id, name, size) VALUES ($1, $2, $3) RETURNING id, name, size",
        [1, "one", 9_007_199_254_740_991],
      );
      t.same(inserted, { rows: [{ id: 1, name: "one", size: 9_007_199_254_740_991 }], rowCount: 1 });
      const updated = await db.query("UPDATE things SET size = $2 WHERE name = $1 OR name = $1", ["one", 2]);
      t.same(updated, { rows: [], rowCount: 1 });
      t.same((await db.query("SELECT COUNT(*) AS n FROM things WHERE size = $1", [2])).rows, [{ n: 1 }]);
      t.same((await db.query("DELETE FROM things WHERE id = $1", [404])).rowCount, 0);
    });

    t.test("a unique index refusing a row is flagged", async (t) => {
      const error = await db
        .query("INSERT INTO things (id, name) VALUES ($1, $2)", [2, "one"])
        .catch((e) => e);
      t.ok(error instanceof DatabaseError);
      t.equal(error.uniqueViolation, true);
      const syntax = await db.query("SELEKT 1").catch((e) => e);
      t.ok(syntax instanceof DatabaseError);
      t.equal(syntax.uniqueViolation, false);
      t.match(
        syntax.message,
        db.dialect === "sqlite" ? /^SQLite: near "SELEKT": syntax error/ : /^PostgreSQL: syntax error/,
      );
    });

    t.test("transactions commit, roll back on a throw, and do not interleave", async (t) => {
      const result = await db.transaction(async (tx) => {
        await tx.query("INSERT INTO things (id, name) VALUES ($1, $2)", [10, "ten"]);
        return "done";
      });
      t.equal(result, "done");
      const failed = await db
        .transaction(async (tx) => {
          await tx.query("INSERT INTO things (id, name) VALUES ($1, $2)", [11, "eleven"]);
          throw new Error("changed my mind");
        })
        .catch((e: Error) => e.message);
      t.equal(failed, "changed my mind");
      t.same((await db.query("SELECT id FROM things WHERE id >= 10 ORDER BY id")).rows, [{ id: 10 }]);
      // Read-modify-write in 20 concurrent transactions: none may see another's uncommitted state.
      await db.query("INSERT INTO things (id, name, size) VALUES (20, 'counter', 0)");
      await Promise.all(
        Array.from({ length: 20 }, () =>
          db.transaction(async (tx) => {
            const lock = db.dialect === "postgres" ? " FOR UPDATE" : "";
            const now = await tx.query<{ size: number }>(`SELECT size FROM things WHERE id = 20${lock}`);
            await tx.query("UPDATE things SET size = $1 WHERE id = 20", [(now.rows[0]?.size ?? 0) + 1]);
          }),
        ),
      );
      t.same((await db.query("SELECT size FROM things WHERE id = 20")).rows, [{ size: 20 }]);
    });
  });
}

t.test("sqlite: a file that cannot be opened is a clear error", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rl-sqlite-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const error = await SqliteDatabase.open({ path: dir }).catch((e) => e);
  t.ok(error instanceof DatabaseError);
  t.equal(error.message, `cannot open SQLite database ${dir}: unable to open database file`);
});

t.test("sqlite: data survives closing and reopening the file", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rl-sqlite-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "db.sqlite");
  const first = await SqliteDatabase.open({ path });
  await applySchemaSteps(first, STEPS);
  await first.query("INSERT INTO things (id, name) VALUES (1, 'kept')");
  await first.close();
  const second = await SqliteDatabase.open({ path });
  t.teardown(() => second.close());
  t.same(await applySchemaSteps(second, STEPS), []);
  t.same((await second.query("SELECT name FROM things")).rows, [{ name: "kept" }]);
  t.same((await second.query("PRAGMA journal_mode")).rows, [{ journal_mode: "wal" }]);
});

t.test("postgres: replicas applying the schema at once apply each step once", async (t) => {
  const schema = await createPostgresSchema(t);
  if (schema === undefined) return;
  const replicas = [1, 2, 3].map(
    () => new PostgresDatabase({ connectionString: schema.url, onIdleError: () => {} }),
  );
  t.teardown(() => Promise.all(replicas.map((db) => db.close())));
  const applied = await Promise.all(replicas.map((db) => applySchemaSteps(db, STEPS)));
  t.same(applied.flat(), ["things-1"]);
});

t.test("postgres: an unreachable server fails calls with a DatabaseError", async (t) => {
  const db = new PostgresDatabase({
    connectionString: "postgres://nobody@127.0.0.1:1/none",
    connectTimeoutMs: 1000,
    onIdleError: () => {},
  });
  t.teardown(() => db.close());
  const error = await db.query("SELECT 1").catch((e) => e);
  t.ok(error instanceof DatabaseError);
  t.match(error.message, /^PostgreSQL: connect ECONNREFUSED 127\.0\.0\.1:1/);
  const inTransaction = await db.transaction(async () => 1).catch((e) => e);
  t.ok(inTransaction instanceof DatabaseError);
});

t.test(
  "a relayed transaction left open by a worker that ended is rolled back, and the lock freed",
  async (t) => {
    const owner = await SqliteDatabase.open({ path: ":memory:" });
    t.teardown(() => owner.close());
    await applySchemaSteps(owner, STEPS, () => 1);
    const channel = new MessageChannel();
    serveRelayedDatabase(owner, channel.port1);
    const worker = new RelayedDatabase("sqlite", channel.port2);
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const abandoned = worker
      .transaction(async (tx) => {
        await tx.query("INSERT INTO things (id, name, size) VALUES ($1, $2, $3)", [1, "half-done", 1]);
        inside();
        await new Promise(() => undefined); // the worker thread ends here
      })
      .catch((error: unknown) => error);
    await entered;
    await worker.close();
    t.type(
      await Promise.race([abandoned, Promise.resolve("pending")]),
      "string",
      "the worker's side never returns",
    );
    // The owner's next transaction gets the lock, and sees nothing of the abandoned one.
    const rows = await owner.transaction(async (tx) => (await tx.query("SELECT name FROM things")).rows);
    t.same(rows, []);
  },
);
