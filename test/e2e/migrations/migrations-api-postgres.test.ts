// The migrations API on PostgreSQL (a schema of this test's own).
import t from "tap";
import { PostgresDatabase } from "../../../src/database/postgres-database.js";
import { startDaemon } from "../../helpers/daemon-process.js";
import { createPostgresSchema } from "../../helpers/postgres-schema.js";
import { migrationsApiCases } from "./migrations-api-cases.js";
import { migrationsEnv } from "./migrations-harness.js";

const schema = await createPostgresSchema(t);
if (schema !== undefined) {
  const dir = t.testdir({ config: {} });
  const daemon = await startDaemon({ RUNTIME_ROOT: dir, ...migrationsEnv(schema.url) });
  t.teardown(() => daemon.stop());
  const db = new PostgresDatabase({ connectionString: schema.url, onIdleError: () => {} });
  t.teardown(() => db.close());
  migrationsApiCases(t, daemon.httpPort, db);
}
