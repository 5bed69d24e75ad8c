// A SQLite DATABASE_URL the daemon cannot write where it points (the image run as another user, or on a
// read-only root file system; docs/containers.md): one warning saying what to change, no retries,
// and the database's calls fail at once while rate limiting goes on.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { ManagedDatabase } from "../../../src/database/managed-database.js";
import { DatabaseError } from "../../../src/errors.js";

t.test("a SQLite file that cannot be created is reported once and left off", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rl-unwritable-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A file where the database's directory should be: fails for every user, root included.
  writeFileSync(join(dir, "data"), "");
  const lines: string[] = [];
  const log = (level: string) => (message: string) => lines.push(`${level}: ${message}`);
  const db = new ManagedDatabase({
    location: { kind: "sqlite", path: join(dir, "data", "ratelimitd.db") },
    steps: [],
    logger: { info: log("info"), warn: log("warn"), error: log("error") },
    retry: { initialMs: 10, maxMs: 10 },
  });
  t.teardown(() => db.close());

  t.equal(await db.start(), false);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(lines.length, 1, "one line, no retries");
  t.match(
    lines[0],
    /^warn: database sqlite:\S+ratelimitd\.db cannot be used, the users and migrations APIs are off: cannot open SQLite database \S+: EEXIST: .*; set DATABASE_URL to a writable sqlite: file \(docs\/containers\.md\) or to postgres:\/\/$/,
  );
  t.notOk(db.ready);
  t.throws(() => db.query("SELECT 1"), DatabaseError, "calls fail at once");
});
