// The migrations API on the embedded default: SQLite in a file.
import { join } from "node:path";
import t from "tap";
import { SqliteDatabase } from "../../../src/database/sqlite-database.js";
import { startDaemon } from "../../helpers/daemon-process.js";
import { migrationsApiCases } from "./migrations-api-cases.js";
import { migrationsEnv } from "./migrations-harness.js";

const dir = t.testdir({ config: {} });
const file = join(dir, "ratelimitd.db");
const daemon = await startDaemon({ RUNTIME_ROOT: dir, ...migrationsEnv(`sqlite:${file}`) });
t.teardown(() => daemon.stop());
const db = await SqliteDatabase.open({ path: file });
t.teardown(() => db.close());
migrationsApiCases(t, daemon.httpPort, db);
