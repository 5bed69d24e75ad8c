// The users REST route table on the embedded default: SQLite in a file.
import { join } from "node:path";
import Sqlite from "better-sqlite3";
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { usersApiCases } from "./users-api-cases.js";

const dir = t.testdir({ config: {} });
const file = join(dir, "data", "users.db");
const daemon = await startDaemon({
  RUNTIME_ROOT: dir,
  DATABASE_URL: `sqlite:${file}`,
  USERS_MAX_BODY_BYTES: "4096",
});
t.teardown(() => daemon.stop());

usersApiCases(t, {
  port: daemon.httpPort,
  maxBodyBytes: 4096,
  async passwordHashOf(emailKey) {
    // A second connection to the daemon's file: WAL lets it read while the daemon writes.
    const db = new Sqlite(file, { readonly: true });
    try {
      const row = db.prepare("SELECT password_hash FROM users WHERE email_key = ?").get(emailKey) as
        | { password_hash: string }
        | undefined;
      return row?.password_hash;
    } finally {
      db.close();
    }
  },
});
